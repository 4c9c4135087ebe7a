// Pictures a person can read: disparity and depth colorized with a color bar whose ticks are
// labelled in metres (or pixels for a pair without a camera model).
#pragma once

#include <string>
#include <vector>

#include "colormap.hpp"
#include "frame.hpp"
#include "image.hpp"
#include "publish/protocol.hpp"

namespace stereod::sub {

// Round values (1, 2 or 5 times a power of ten) in [lo, hi], about `count` of them.
std::vector<double> nice_ticks(double lo, double hi, int count);

struct LegendTick {
  double position = 0;  // 0 = the bar's bottom (colormap index 0), 1 = its top
  std::string label;
};

// `picture` with a color bar to its right (the perceptual colormap, far at the bottom, near at the
// top), each tick a line and its label, and `title` above the bar. The result is taller than
// `picture` when the picture is too short for the labels.
RgbImage add_color_bar(const RgbImage& picture, const std::vector<LegendTick>& ticks,
                       const std::string& title);

// The disparity picture of stereod-sub's _color.png: d from min_d to max_d across the colormap,
// ticks at round depths in metres when the camera model allows (else round disparities in px).
RgbImage disparity_picture(ImageView<const std::uint16_t> disparity, double min_d, double max_d,
                           const publish::DepthCalibration& camera);

// Depth range worth showing: the 1st to the 99th percentile of the frame's depths (metres); false
// when the frame has no depth.
bool depth_range(ImageView<const std::uint16_t> disparity, const publish::DepthCalibration& camera,
                 double& near_m, double& far_m);

// Depth colorized linearly from near_m (the colormap's top: bright) to far_m (its bottom), pixels
// without depth black, with a color bar in metres.
RgbImage depth_picture(ImageView<const std::uint16_t> disparity,
                       const publish::DepthCalibration& camera, double near_m, double far_m);

}  // namespace stereod::sub
