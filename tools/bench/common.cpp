#include <stdexcept>

#include "bench.hpp"
#include "stereo_yaml.hpp"

namespace stereod::bench {

StereoParams resolve_params(const CommonOptions& o, const StereoParams& base) {
  StereoParams p = o.config.empty() ? base : load_stereo_params_file(o.config, base);
  if (!o.sets.empty()) {
    YamlReader reader("--set");
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& s : o.sets) {
      const auto eq = s.find('=');
      if (eq == std::string::npos || eq == 0) {
        reader.issues().push_back({"--set", 0, 0, s, "expected key=value"});
        continue;
      }
      try {
        map[s.substr(0, eq)] = YAML::Load(s.substr(eq + 1));
      } catch (const YAML::Exception& e) {
        reader.issues().push_back({"--set", 0, 0, s, "not a YAML value: " + e.msg});
      }
    }
    read_stereo_params(reader, map, "stereo", p);
    reader.throw_if_failed();
  }
  return p;
}

std::unique_ptr<Engine> open_engine(const CommonOptions& o, int width, int height,
                                    const StereoParams& params, int inflight) {
  EngineOptions eo;
  eo.width = width;
  eo.height = height;
  eo.stereo = params;
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
  for (;;) {
    auto r = engine.poll(std::chrono::seconds(60));
    if (!r)
      throw std::runtime_error("engine " + std::string(engine.name()) + ": no result in 60 s");
    if (r->sequence != sequence) continue;
    if (!r->ok) throw std::runtime_error(r->error);
    if (timings) *timings = r->timings;
    Disparity16 out(r->disparity.width, r->disparity.height);
    copy_into(r->disparity, out);
    return out;
  }
}

}  // namespace stereod::bench
