// Small helpers around the GStreamer C API: one-time initialisation, owning pointers, and error
// messages a user can act on.
#pragma once

#include <gst/gst.h>

#include <memory>
#include <string>

namespace stereod {

// gst_init once per process; throws std::runtime_error with GStreamer's reason when it fails.
void ensure_gstreamer();

struct GstUnref {
  void operator()(gpointer object) const {
    if (object) gst_object_unref(object);
  }
};
template <typename T>
using GstRef = std::unique_ptr<T, GstUnref>;

struct GstMessageUnref {
  void operator()(GstMessage* m) const {
    if (m) gst_message_unref(m);
  }
};
using GstMessageRef = std::unique_ptr<GstMessage, GstMessageUnref>;

// An ERROR or WARNING message as one line: GStreamer's message, then the last line of its debug
// text, which holds the actual reason ("streaming stopped, reason not-negotiated (-4)").
std::string describe_message(GstMessage* message);

}  // namespace stereod
