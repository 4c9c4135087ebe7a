// What ingest hands to the rest of the frame path: one camera's image with its metadata, and a
// synchronised set of them for a rig (docs/ARCHITECTURE.md "Data flow").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "image.hpp"
#include "stereo/pixel_ops.hpp"
#include "yuv.hpp"

namespace stereod {

// 8-bit RGB, interleaved, rows packed (stride = 3 * width bytes).
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;

  void resize(int w, int h) {
    width = w;
    height = h;
    pixels.assign(static_cast<std::size_t>(w) * h * 3, 0);
  }
  bool empty() const { return pixels.empty(); }
  std::uint8_t* row(int y) { return pixels.data() + static_cast<std::size_t>(y) * width * 3; }
  const std::uint8_t* row(int y) const {
    return pixels.data() + static_cast<std::size_t>(y) * width * 3;
  }
  // Interleaved bytes as a view of width*3 columns.
  ImageView<const std::uint8_t> bytes() const {
    return {pixels.data(), width * 3, height, width * 3};
  }
};

// A non-owning view of interleaved RGB (stride in bytes), e.g. a GStreamer buffer's pixels.
struct RgbView {
  const std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;  // bytes between row starts

  bool empty() const { return data == nullptr || width <= 0 || height <= 0; }
  const std::uint8_t* row(int y) const { return data + static_cast<std::ptrdiff_t>(y) * stride; }
};

inline RgbView view_of(const RgbImage& img) {
  return {img.pixels.data(), img.width, img.height, static_cast<std::ptrdiff_t>(img.width) * 3};
}
// Copies a view into a packed image (resizing it if needed).
void copy_into(const RgbView& src, RgbImage& dst);

// BT.601 luma, integer: (77 R + 150 G + 29 B + 128) >> 8 (pixel_ops.hpp, shared with the GPU).
inline std::uint8_t luma(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return luma_bt601(r, g, b);
}
void rgb_to_gray(const RgbImage& rgb, Gray8& gray);
void rgb_to_gray(const RgbView& rgb, Gray8& gray);
// Into rows of `dst_stride` bytes (e.g. a pooled frame's buffer).
void rgb_to_gray(const RgbView& rgb, std::uint8_t* dst, std::ptrdiff_t dst_stride);
// A YUV frame's RGB (yuv_pixel_rgb), into a packed image (resized if needed): what both engines
// and the daemon's published `left` image make of a camera that delivers YUV.
void yuv_to_rgb(const YuvView& src, RgbImage& dst);
void yuv_to_rgb(const YuvView& src, std::uint8_t* dst, std::ptrdiff_t dst_stride);
// A frame of `format` whose rows (and planes) lie packed from `data`: UYVY rows of 2 * width
// bytes; NV12's Y plane, then its chroma plane, width bytes a row.
YuvView packed_yuv(YuvFormat format, const std::uint8_t* data, int width, int height);
// Copies a frame into `dst` in the packed layout (yuv_packed_bytes of them).
void copy_packed(const YuvView& src, std::uint8_t* dst);

enum class FrameStatus {
  kOk,
  kDropped,  // not delivered: the consumer was too slow or the set was incomplete
  kError,    // the source failed; `error` says why
};

// Where ingest puts camera pixels: `bytes` bytes that stay valid while the returned pointer (or
// a copy of it) lives. The daemon hands in page-locked memory (allocate_pinned) when its engine
// uploads from it; the default is ordinary memory.
using PixelAllocator = std::function<std::shared_ptr<std::uint8_t>(std::size_t bytes)>;
std::shared_ptr<std::uint8_t> allocate_pixels(std::size_t bytes);  // ordinary memory

// One camera's frame as delivered by ingest: 8-bit gray from a gray camera, packed RGB from a
// color camera (the engines derive the gray they match from it: luma_bt601), or, from a color
// camera with a `raw_format`, its own UYVY or NV12 (the engine converts it: yuv.hpp); only one.
struct CameraFrame {
  std::string camera;                  // the camera's name in the configuration
  std::uint64_t sequence = 0;          // per camera, counting delivered buffers from 0
  std::int64_t capture_time_ns = 0;    // CLOCK_REALTIME nanoseconds (buffer time + base time)
  ImageView<const std::uint8_t> gray;  // gray cameras (rows packed); empty for color cameras
  RgbView color;                       // color cameras (rows packed); empty for gray cameras
  YuvView yuv;  // color cameras with a raw_format (rows packed, NV12's planes back to back)
  FrameStatus status = FrameStatus::kOk;
  std::string error;
  // synthetic:// cameras and replayed images: the source's frame index (SyntheticScene::render
  // renders this frame and its ground truth; for images, the file's number); -1 otherwise.
  std::int64_t source_index = -1;

  // The memory `gray`, `color` or `yuv` point into, kept by the frame pool across frames. A copy of
  // a frame shares it (and keeps it alive): reserve() then never writes into it again.
  std::shared_ptr<std::uint8_t> storage;
  std::size_t storage_bytes = 0;
  // Makes room for a frame of `bytes` bytes (reusing the storage when it is big enough and no
  // copy shares it) and returns where to write it.
  std::uint8_t* reserve(std::size_t bytes, const PixelAllocator& allocate);
};

// The frame's pixels as an owned image (tests, tools): its gray, or the luma of its color (of its
// YUV's RGB).
Gray8 gray_of(const CameraFrame& frame);

// The frames of one rig whose capture times lie within the sync tolerance, in the rig's camera
// order. Frames are shared: several pairs of a rig read the same camera's frame.
struct FrameSet {
  std::uint64_t sequence = 0;  // per rig, counting emitted sets from 0
  std::vector<std::shared_ptr<const CameraFrame>> frames;
  std::int64_t complete_time_ns = 0;  // CLOCK_REALTIME when the last frame of the set arrived
};

}  // namespace stereod
