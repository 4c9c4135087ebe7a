#include "publish/zmq_payload.hpp"

namespace stereod::publish {
namespace {

// ZeroMQ's free callback (zmq_free_fn): `hint` is the heap-held keep-alive reference.
void release_keep_alive(void* /*data*/, void* hint) noexcept {
  delete static_cast<std::shared_ptr<const void>*>(hint);
}

}  // namespace

zmq::message_t borrow_message(const void* data, std::size_t size,
                              std::shared_ptr<const void> keep_alive) {
  auto hint = std::make_unique<std::shared_ptr<const void>>(std::move(keep_alive));
  // libzmq never writes through a message's data pointer on the sending side; the const_cast only
  // satisfies zmq_msg_init_data's signature. If the constructor throws, libzmq has not taken the
  // hint and unique_ptr frees it.
  zmq::message_t msg(const_cast<void*>(data), size, &release_keep_alive, hint.get());
  static_cast<void>(hint.release());  // the message owns it now; see release_keep_alive
  return msg;
}

}  // namespace stereod::publish
