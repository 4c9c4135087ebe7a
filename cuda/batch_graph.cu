#include "batch_graph.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "device_pipeline.hpp"

namespace stereod::cuda {
namespace {

// Owns a graph under construction.
class GraphHandle {
 public:
  GraphHandle() = default;
  explicit GraphHandle(cudaGraph_t g) : g_(g) {}
  GraphHandle(GraphHandle&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  GraphHandle& operator=(GraphHandle&&) = delete;
  GraphHandle(const GraphHandle&) = delete;
  ~GraphHandle() {
    if (g_) cudaGraphDestroy(g_);
  }
  cudaGraph_t get() const { return g_; }

 private:
  cudaGraph_t g_ = nullptr;
};

// What `enqueue` puts on `st`, as a graph.
template <typename Enqueue>
GraphHandle capture(cudaStream_t st, const Enqueue& enqueue) {
  cudaGraph_t graph = nullptr;
  STEREOD_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue(st);
  } catch (...) {
    cudaStreamEndCapture(st, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  STEREOD_CUDA(cudaStreamEndCapture(st, &graph));
  return GraphHandle(graph);
}

cudaGraphExec_t instantiate(const GraphHandle& g) {
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, g.get(), 0);
  if (err != cudaSuccess) throw CudaError("cudaGraphInstantiate", err, __FILE__, __LINE__);
  return exec;
}

#if CUDART_VERSION >= 12040
constexpr int kGateRuntime = 12040;  // conditional IF nodes

// An IF node of `graph` after `after`, whose body is `body` (as a child graph).
cudaGraphNode_t add_branch(cudaGraph_t graph, const std::vector<cudaGraphNode_t>& after,
                           cudaGraphConditionalHandle handle, const GraphHandle& body) {
  cudaGraphNodeParams p = {};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = handle;
  p.conditional.type = cudaGraphCondTypeIf;
  p.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
#if CUDART_VERSION >= 13000
  STEREOD_CUDA(cudaGraphAddNode(&node, graph, after.data(), nullptr, after.size(), &p));
#else
  STEREOD_CUDA(cudaGraphAddNode(&node, graph, after.data(), after.size(), &p));
#endif
  cudaGraphNode_t child = nullptr;
  STEREOD_CUDA(
      cudaGraphAddChildGraphNode(&child, p.conditional.phGraph_out[0], nullptr, 0, body.get()));
  return node;
}

// The nodes of `graph` that no other node waits for.
std::vector<cudaGraphNode_t> sinks(cudaGraph_t graph) {
  std::size_t n = 0, e = 0;
  STEREOD_CUDA(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  STEREOD_CUDA(cudaGraphGetNodes(graph, nodes.data(), &n));
#if CUDART_VERSION >= 13000
  STEREOD_CUDA(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &e));
#else
  STEREOD_CUDA(cudaGraphGetEdges(graph, nullptr, nullptr, &e));
#endif
  std::vector<cudaGraphNode_t> from(e), to(e);
#if CUDART_VERSION >= 13000
  STEREOD_CUDA(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &e));
#else
  STEREOD_CUDA(cudaGraphGetEdges(graph, from.data(), to.data(), &e));
#endif
  std::vector<cudaGraphNode_t> out;
  for (cudaGraphNode_t node : nodes) {
    if (std::find(from.begin(), from.end(), node) == from.end()) out.push_back(node);
  }
  return out;
}

// model -> IF (stereo). The finest model kernel writes the outputs of a frame without foreground
// and opens the stereo branch where it finds foreground (ForegroundSignal); each launch starts with
// it closed. The model's nodes are captured into the graph that holds the handle, and nothing sits
// between the model and the branch: no gate kernel, no second branch for the empty outputs.
cudaGraphExec_t instantiate_gated(const BatchShape& shape, const BatchRecord* batch,
                                  const Workspace& ws, cudaStream_t st) {
  const GraphHandle stereo =
      capture(st, [&](cudaStream_t s) { enqueue_stereo(shape, batch, ws, s); });
  cudaGraph_t raw = nullptr;
  STEREOD_CUDA(cudaGraphCreate(&raw, 0));
  const GraphHandle whole(raw);
  ForegroundSignal gate;
  gate.gated = true;
  cudaGraphConditionalHandle on_stereo = 0;
  STEREOD_CUDA(cudaGraphConditionalHandleCreate(&on_stereo, raw, 0, cudaGraphCondAssignDefault));
  gate.stereo = on_stereo;
  STEREOD_CUDA(cudaStreamBeginCaptureToGraph(st, raw, nullptr, nullptr, 0,
                                             cudaStreamCaptureModeThreadLocal));
  cudaGraph_t captured = nullptr;
  try {
    enqueue_model(shape, batch, ws, st, nullptr, &gate);
  } catch (...) {
    cudaStreamEndCapture(st, &captured);  // `raw` itself, owned by `whole`
    throw;
  }
  STEREOD_CUDA(cudaStreamEndCapture(st, &captured));
  add_branch(raw, sinks(raw), on_stereo, stereo);
  return instantiate(whole);
}

#endif

}  // namespace

// STEREOD_CUDA_GATE=0 in the environment builds plain graphs (Nsight Compute does not profile
// kernels in graphs with conditional nodes; and for comparisons).
bool batch_gate_available() {
#if CUDART_VERSION >= 12040
  static const bool available = [] {
    const char* env = std::getenv("STEREOD_CUDA_GATE");
    if (env && std::string(env) == "0") return false;
    int driver = 0;
    return cudaDriverGetVersion(&driver) == cudaSuccess && driver >= kGateRuntime;
  }();
  return available;
#else
  return false;
#endif
}

BatchGraph instantiate_batch_graph(const BatchShape& shape, const BatchRecord* batch,
                                   const Workspace& ws, cudaStream_t capture_stream, bool gated) {
#if CUDART_VERSION >= 12040
  if (gated && shape.modeling && batch_gate_available()) {
    try {
      return {instantiate_gated(shape, batch, ws, capture_stream), true};
    } catch (const CudaError&) {
      // A driver or device without conditional nodes: the plain sequence computes the same.
      cudaGetLastError();
    }
  }
#endif
  const GraphHandle plain =
      capture(capture_stream, [&](cudaStream_t s) { enqueue_batch(shape, batch, ws, s); });
  return {instantiate(plain), false};
}

}  // namespace stereod::cuda
