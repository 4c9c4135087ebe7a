#include "batch_graph.hpp"

#include <cstdint>
#include <utility>

#include "cuda_check.hpp"
#include "cuda_device.hpp"
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

// The stereo part of a gated batch: gate -> IF (stereo). The finest model kernel (in the model's
// graph, which runs before this one) has written the outputs of a frame without foreground
// (ForegroundSignal), which the stereo branch overwrites when it runs.
// Tried and dropped (H100, empty intensity frame, compute per frame, model and gate in one graph
// then: 0.072 ms): the model captured into this graph itself (cudaStreamBeginCaptureToGraph) with
// the finest model kernel opening the branch, no gate kernel: 0.087 ms without the overlapping
// launches, 0.104 ms with them; the same as a child graph, the handle reset by
// cudaGraphCondAssignDefault: 0.082 ms (with the gate kernel and that flag: 0.083 ms).
cudaGraphExec_t instantiate_gated_stereo(const BatchShape& shape, const BatchRecord* batch,
                                         const Workspace& ws, cudaStream_t st) {
  const GraphHandle stereo =
      capture(st, [&](cudaStream_t s) { enqueue_stereo(shape, batch, ws, s); });
  cudaGraph_t raw = nullptr;
  STEREOD_CUDA(cudaGraphCreate(&raw, 0));
  const GraphHandle whole(raw);
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
  STEREOD_CUDA(cudaGraphAddKernelNode(&gate, raw, nullptr, 0, &k));
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
    if (!cuda_switch_on("STEREOD_CUDA_GATE")) return false;
    int driver = 0;
    return cudaDriverGetVersion(&driver) == cudaSuccess && driver >= kGateRuntime;
  }();
  return available;
#else
  return false;
#endif
}

void destroy_batch_graph(BatchGraph& g) {
  if (g.model) cudaGraphExecDestroy(g.model);
  if (g.exec) cudaGraphExecDestroy(g.exec);
  g = BatchGraph{};
}

BatchGraph instantiate_batch_graph(const BatchShape& shape, const BatchRecord* batch,
                                   const Workspace& ws, cudaStream_t capture_stream, bool gated) {
  if (!shape.modeling) {
    const GraphHandle whole =
        capture(capture_stream, [&](cudaStream_t s) { enqueue_batch(shape, batch, ws, s); });
    return {nullptr, instantiate(whole), false};
  }
  // The stereo part first: whether it could be gated decides what the model part writes.
  BatchGraph g;
  try {
#if CUDART_VERSION >= 12040
    if (gated && batch_gate_available()) {
      try {
        g.exec = instantiate_gated_stereo(shape, batch, ws, capture_stream);
        g.gated = true;
      } catch (const CudaError&) {
        // A driver or device without conditional nodes: the plain stereo part computes the
        // same, after a model that writes no outputs of its own.
        cudaGetLastError();
      }
    }
#endif
    if (!g.exec) {
      const GraphHandle stereo =
          capture(capture_stream, [&](cudaStream_t s) { enqueue_stereo(shape, batch, ws, s); });
      g.exec = instantiate(stereo);
    }
    ForegroundSignal signal;
    signal.gated = g.gated;
    const GraphHandle model = capture(capture_stream, [&](cudaStream_t s) {
      enqueue_model(shape, batch, ws, s, nullptr, &signal);
    });
    g.model = instantiate(model);
  } catch (...) {
    destroy_batch_graph(g);
    throw;
  }
  return g;
}

}  // namespace stereod::cuda
