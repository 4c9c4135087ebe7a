#include "publish/heap.hpp"

#include <cstdlib>  // defines __GLIBC__ where it applies

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace stereod::publish {

void release_free_heap() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace stereod::publish
