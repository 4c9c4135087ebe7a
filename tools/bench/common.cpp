#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "background_yaml.hpp"
#include "bench.hpp"
#include "stereo_yaml.hpp"

namespace stereod::bench {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::vector<std::pair<std::string, double>> cpu_profile(
    const CommonOptions& common, const PairParams& params, int skip,
    const std::function<PairFrame(int)>& frame) {
  CpuPairProcessor processor(params.stereo, params.background, common.threads);
  PairOutput out;
  std::vector<std::vector<StageTime>> runs;
  for (int i = 0; i < skip + 21; ++i) {
    processor.process(frame(i), out);
    if (i >= skip) runs.push_back(out.stage_times);
  }
  std::vector<std::pair<std::string, double>> stages;
  for (std::size_t s = 0; s < runs.front().size(); ++s) {
    std::vector<double> t;
    for (const auto& r : runs) t.push_back(r[s].ms);
    stages.emplace_back(runs.front()[s].stage, median(t));
  }
  return stages;
}

void print_stages(const std::vector<std::pair<std::string, double>>& stages, const char* where) {
  double sum = 0;
  std::printf("  stages of one frame, %s (median of 21, ms):\n", where);
  for (const auto& [stage, ms] : stages) {
    std::printf("    %-48s %8.4f\n", stage.c_str(), ms);
    sum += ms;
  }
  std::printf("    %-48s %8.4f\n", "sum", sum);
}

PairParams resolve_params(const CommonOptions& o, const PairParams& base) {
  PairParams p = o.config.empty() ? base : load_params_file(o.config, base);
  if (!o.sets.empty()) {
    YamlReader reader("--set");
    YAML::Node stereo(YAML::NodeType::Map), background(YAML::NodeType::Map);
    for (const auto& s : o.sets) {
      const auto eq = s.find('=');
      if (eq == std::string::npos || eq == 0) {
        reader.issues().push_back({"--set", 0, 0, s, "expected key=value"});
        continue;
      }
      std::string key = s.substr(0, eq);
      YAML::Node* section = &stereo;
      if (key.rfind("background.", 0) == 0) {
        section = &background;
        key = key.substr(11);
      } else if (key.rfind("stereo.", 0) == 0) {
        key = key.substr(7);
      }
      try {
        (*section)[key] = YAML::Load(s.substr(eq + 1));
      } catch (const YAML::Exception& e) {
        reader.issues().push_back({"--set", 0, 0, s, "not a YAML value: " + e.msg});
      }
    }
    read_stereo_params(reader, stereo, "stereo", p.stereo);
    read_background_params(reader, background, "background", p.background);
    reader.throw_if_failed();
  }
  return p;
}

PairParams resolve_stereo_only(const CommonOptions& o, bool fill) {
  PairParams base;
  base.stereo.fill = fill;
  PairParams p = resolve_params(o, base);
  if (fill) p.stereo.fill = true;
  p.background.enabled = false;
  return p;
}

std::optional<Scene> load_scene_option(const char* command, const std::string& dir) {
  const std::optional<SceneFiles> files = scene_in(dir);
  if (!files) {
    std::cerr << "stereod-bench " << command << ": --scene " << dir
              << ": no Middlebury scene there\n";
    return std::nullopt;
  }
  return load_scene(*files);
}

std::unique_ptr<Engine> open_engine(const CommonOptions& o, int width, int height,
                                    const PairParams& params, int inflight,
                                    std::shared_ptr<EngineGroup> group, bool right_output,
                                    bool busy_poll, bool watch_ends) {
  EngineOptions eo;
  eo.busy_poll = busy_poll;
  eo.watch_ends = watch_ends;
  eo.group = std::move(group);
  eo.right_output = right_output;
  eo.width = width;
  eo.height = height;
  eo.stereo = params.stereo;
  eo.background = params.background;
  eo.inflight = inflight;
  eo.cpu_threads = o.threads;
  return make_engine(o.engine, eo);
}

Disparity16 run_pair(Engine& engine, const Gray8& left, const Gray8& right, std::uint64_t sequence,
                     StageTimings* timings) {
  FrameInput in;
  in.sequence = sequence;
  in.left = left.view();
  in.right = right.view();
  while (engine.submit(in) == SubmitStatus::kBusy) {
    // Only results of earlier calls can be in the way; drain them.
    engine.poll(std::chrono::milliseconds(100));
  }
  const EngineResult r = wait_for_result(engine, sequence);
  if (timings) *timings = r.timings;
  Disparity16 out(r.disparity.width, r.disparity.height);
  copy_into(r.disparity, out);
  return out;
}

EngineResult wait_for_result(Engine& engine, std::uint64_t sequence) {
  for (;;) {
    auto r = engine.poll(std::chrono::seconds(60));
    if (!r)
      throw std::runtime_error("engine " + std::string(engine.name()) + ": no result in 60 s");
    if (r->sequence != sequence) continue;
    if (!r->ok) throw std::runtime_error(r->error);
    return std::move(*r);
  }
}

}  // namespace stereod::bench
