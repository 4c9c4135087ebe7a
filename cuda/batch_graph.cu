#include "batch_graph.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

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
cudaGraphNode_t add_branch(cudaGraph_t graph, cudaGraphNode_t after,
                           cudaGraphConditionalHandle handle, const GraphHandle& body) {
  cudaGraphNodeParams p = {};
  p.type = cudaGraphNodeTypeConditional;
  p.conditional.handle = handle;
  p.conditional.type = cudaGraphCondTypeIf;
  p.conditional.size = 1;
  cudaGraphNode_t node = nullptr;
#if CUDART_VERSION >= 13000
  STEREOD_CUDA(cudaGraphAddNode(&node, graph, &after, nullptr, 1, &p));
#else
  STEREOD_CUDA(cudaGraphAddNode(&node, graph, &after, 1, &p));
#endif
  cudaGraphNode_t child = nullptr;
  STEREOD_CUDA(
      cudaGraphAddChildGraphNode(&child, p.conditional.phGraph_out[0], nullptr, 0, body.get()));
  return node;
}

// The gate: one thread reads the model's word and opens the stereo branch or not.
__global__ void stereo_gate_kernel(const std::uint32_t* any_foreground,
                                   cudaGraphConditionalHandle stereo) {
  cudaGraphSetConditional(stereo, *any_foreground != 0 ? 1u : 0u);
}

// model -> gate -> IF (stereo). The finest model kernel has written the outputs of a frame without
// foreground (ForegroundSignal), which the stereo branch overwrites when it runs. The model is a
// child graph captured like the plain graph, with its levels' overlapping launches (background.cu).
// Tried and dropped (H100, empty intensity frame, compute per frame: this graph 0.072 ms): the
// model captured into this graph itself (cudaStreamBeginCaptureToGraph) with the finest model
// kernel opening the branch, no gate kernel: 0.087 ms without the overlapping launches, 0.104 ms
// with them; the same as a child graph, the handle reset by cudaGraphCondAssignDefault: 0.082 ms
// (with the gate kernel and that flag: 0.083 ms).
cudaGraphExec_t instantiate_gated(const BatchShape& shape, const BatchRecord* batch,
                                  const Workspace& ws, cudaStream_t st) {
  ForegroundSignal signal;
  signal.gated = true;
  const GraphHandle model =
      capture(st, [&](cudaStream_t s) { enqueue_model(shape, batch, ws, s, nullptr, &signal); });
  const GraphHandle stereo =
      capture(st, [&](cudaStream_t s) { enqueue_stereo(shape, batch, ws, s); });
  cudaGraph_t raw = nullptr;
  STEREOD_CUDA(cudaGraphCreate(&raw, 0));
  const GraphHandle whole(raw);
  cudaGraphNode_t model_node = nullptr;
  STEREOD_CUDA(cudaGraphAddChildGraphNode(&model_node, raw, nullptr, 0, model.get()));
  // No default value: the gate kernel sets the handle on every launch.
  cudaGraphConditionalHandle on_stereo = 0;
  STEREOD_CUDA(cudaGraphConditionalHandleCreate(&on_stereo, raw, 0, 0));
  const std::uint32_t* word = &ws.counters[0].foreground;
  void* args[] = {&word, &on_stereo};
  cudaKernelNodeParams k = {};
  k.func = reinterpret_cast<void*>(stereo_gate_kernel);
  k.gridDim = dim3(1);
  k.blockDim = dim3(1);
  k.kernelParams = args;
  cudaGraphNode_t gate = nullptr;
  STEREOD_CUDA(cudaGraphAddKernelNode(&gate, raw, &model_node, 1, &k));
  add_branch(raw, gate, on_stereo, stereo);
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
