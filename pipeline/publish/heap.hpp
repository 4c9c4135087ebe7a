// Giving the heap's free memory back to the system. glibc keeps freed pages for reuse, so after a
// burst of allocations (ZeroMQ's subscription trie for a client that subscribed to very many
// topics, a big configuration parsed on reload) the process would otherwise keep its peak size.
#pragma once

namespace stereod::publish {

// malloc_trim(0) where the C library has it; nothing elsewhere.
void release_free_heap();

}  // namespace stereod::publish
