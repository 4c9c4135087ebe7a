// Payload bytes into ZeroMQ messages, without a copy where the buffer allows.
#pragma once

#include <cstddef>
#include <memory>

#include <zmq.hpp>

namespace stereod::publish {

// A message whose content is the `size` bytes at `data`, not copied. The message owns a reference
// to `keep_alive` and drops it in ZeroMQ's free callback, once every subscriber's copy of the
// message is gone: on ZeroMQ's I/O thread after the bytes are written, or on the sending thread
// when no subscriber takes the message.
zmq::message_t borrow_message(const void* data, std::size_t size,
                              std::shared_ptr<const void> keep_alive);

}  // namespace stereod::publish
