#include "ingest/gst_support.hpp"

#include <mutex>
#include <stdexcept>

namespace stereod {

void ensure_gstreamer() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    GError* error = nullptr;
    if (!gst_init_check(nullptr, nullptr, &error)) {
      failure = std::string("GStreamer could not be initialised: ") +
                (error ? error->message : "unknown reason");
      if (error) g_error_free(error);
    }
  });
  if (!failure.empty()) throw std::runtime_error(failure);
}

std::string describe_message(GstMessage* message) {
  GError* error = nullptr;
  gchar* debug = nullptr;
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    gst_message_parse_error(message, &error, &debug);
  } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_WARNING) {
    gst_message_parse_warning(message, &error, &debug);
  } else {
    return GST_MESSAGE_TYPE_NAME(message);
  }
  std::string text = error ? error->message : "unknown error";
  if (debug) {
    std::string d = debug;
    while (!d.empty() && (d.back() == '\n' || d.back() == ' ')) d.pop_back();
    const std::size_t nl = d.rfind('\n');
    if (nl != std::string::npos) d = d.substr(nl + 1);
    if (!d.empty() && text.find(d) == std::string::npos) text += " (" + d + ")";
  }
  if (error) g_error_free(error);
  g_free(debug);
  return text;
}

}  // namespace stereod
