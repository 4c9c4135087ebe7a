#include "engine.hpp"

#include <string>

#include "stereo/params.hpp"

namespace stereod {

void check_frame_size(const FrameInput& f, int width, int height) {
  auto size = [](int w, int h) { return std::to_string(w) + "x" + std::to_string(h); };
  const bool has_color = !f.left_color.empty() && !f.right_color.empty();
  if (yuv_input(f)) {
    const YuvView& l = f.left_yuv;
    const YuvView& r = f.right_yuv;
    if (l.width != width || l.height != height || r.width != width || r.height != height) {
      throw ParameterError("frame", "frame " + std::to_string(f.sequence) + " is " +
                                        size(l.width, l.height) + " / " + size(r.width, r.height) +
                                        " (YUV), the engine expects " + size(width, height));
    }
    for (const YuvView* v : {&l, &r}) {
      const bool nv12 = v->format == YuvFormat::kNv12;
      if (width % 2 != 0 || (nv12 && (height % 2 != 0 || v->chroma == nullptr))) {
        throw ParameterError("frame", std::string(yuv_format_name(v->format)) + " frame " +
                                          std::to_string(f.sequence) + " of " +
                                          size(width, height) +
                                          ": needs an even width (and height, and a chroma plane, "
                                          "for NV12)");
      }
    }
    return;
  }
  if (gray_from_color(f)) {
    if (f.left_color.width != width || f.left_color.height != height ||
        f.right_color.width != width || f.right_color.height != height) {
      throw ParameterError("frame", "frame " + std::to_string(f.sequence) + " is " +
                                        size(f.left_color.width, f.left_color.height) + " / " +
                                        size(f.right_color.width, f.right_color.height) +
                                        " (color only), the engine expects " + size(width, height));
    }
    return;
  }
  if (f.left.width != width || f.left.height != height || f.right.width != width ||
      f.right.height != height) {
    throw ParameterError("frame", "frame " + std::to_string(f.sequence) + " is " +
                                      size(f.left.width, f.left.height) + " / " +
                                      size(f.right.width, f.right.height) +
                                      ", the engine expects " + size(width, height));
  }
  if (has_color && (f.left_color.width != width || f.left_color.height != height ||
                    f.right_color.width != width || f.right_color.height != height)) {
    throw ParameterError("color", "color images do not have the frame's size");
  }
}

std::optional<ParameterError> cuda_engine_unsupported([[maybe_unused]] const StereoParams& p,
                                                      [[maybe_unused]] const BackgroundParams& b) {
  // Every mode runs on both engines: cross-based aggregation (aggregation cross, sgm_cost cross)
  // since cuda/kernels/cross.cu; the support-based absorption (issue 13) since the CUDA model
  // classifies each tile's halo from the state before the frame's learning (background.cu); the
  // ghosts seen in depth since its model reads the record of the frame depth_lag before,
  // waiting for that frame's stereo part (cuda_engine.cu). Kept, with the loader's report of it,
  // for the next option that one engine has first.
  return std::nullopt;
}

void check_engine_options(const EngineOptions& o) {
  if (o.inflight < 1 || o.inflight > 64) {
    // Named as the engine option it is: the daemon's loader checks its own key (gpu.inflight)
    // before an engine is built, and the CPU engine has nothing to do with a GPU.
    throw ParameterError::bad_value("inflight", std::to_string(o.inflight),
                                    "must be between 1 and 64 frames in flight per pair");
  }
  if (!o.left_map != !o.right_map) {
    throw ParameterError("calibration", "rectification needs maps for both cameras or neither");
  }
  for (const auto* m : {o.left_map.get(), o.right_map.get()}) {
    if (m && (m->width != o.width || m->height != o.height)) {
      throw ParameterError("calibration",
                           "the rectification maps are for " + std::to_string(m->width) + "x" +
                               std::to_string(m->height) + " images, the engine's are " +
                               std::to_string(o.width) + "x" + std::to_string(o.height));
    }
  }
}

}  // namespace stereod
