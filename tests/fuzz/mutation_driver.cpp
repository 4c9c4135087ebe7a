// A seeded mutation fuzzer for the targets of this folder, for builds without libFuzzer (GCC): it
// runs every file of the corpus folders, then mutated versions of them (byte flips, deletions,
// insertions of random bytes and of dictionary tokens, duplicated and spliced spans) until the
// time budget is spent. The seed fixes the sequence of mutations; the budget only decides how far
// along it the run gets. An input that makes the target fail (a sanitizer report, a failed
// property) is written to $FUZZ_CRASH_DIR (default: the working folder) before the process dies,
// so that it can be replayed: `DRIVER FILE`.
//
//   fuzz_x --seconds 45 --seed 1 [--dict FILE] CORPUS_DIR... | FILE...
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_target.hpp"

namespace fs = std::filesystem;

namespace {

using Bytes = std::string;

Bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// libFuzzer's dictionary format: one "token" per line (C escapes \xNN, \n, \", \\), # comments.
std::vector<Bytes> read_dictionary(const fs::path& p) {
  std::vector<Bytes> tokens;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    const auto open = line.find('"');
    const auto close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
    Bytes t;
    for (std::size_t i = open + 1; i < close; ++i) {
      if (line[i] != '\\' || i + 1 >= close) {
        t += line[i];
        continue;
      }
      const char e = line[++i];
      if (e == 'x' && i + 2 < close) {
        t += static_cast<char>(std::stoi(line.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        t += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
    }
    tokens.push_back(t);
  }
  return tokens;
}

class Mutator {
 public:
  Mutator(std::uint32_t seed, std::vector<Bytes> dictionary)
      : rng_(seed), dictionary_(std::move(dictionary)) {}

  Bytes mutate(Bytes b, const std::vector<Bytes>& corpus) {
    const int edits = 1 + static_cast<int>(rng_() % 8);
    for (int e = 0; e < edits; ++e) edit(b, corpus);
    if (b.size() > kMaxSize) b.resize(kMaxSize);
    return b;
  }

 private:
  static constexpr std::size_t kMaxSize = 64 * 1024;

  std::size_t pos(const Bytes& b) { return b.empty() ? 0 : rng_() % (b.size() + 1); }

  void edit(Bytes& b, const std::vector<Bytes>& corpus) {
    switch (rng_() % 9) {
      case 0:  // flip bits of a byte
        if (!b.empty()) b[rng_() % b.size()] ^= static_cast<char>(1u << (rng_() % 8));
        break;
      case 1:  // a random byte
        if (!b.empty()) b[rng_() % b.size()] = static_cast<char>(rng_());
        break;
      case 2:  // delete a span
        if (!b.empty()) b.erase(rng_() % b.size(), 1 + rng_() % 16);
        break;
      case 3: {  // insert random bytes
        Bytes r(1 + rng_() % 8, '\0');
        for (auto& c : r) c = static_cast<char>(rng_());
        b.insert(pos(b), r);
        break;
      }
      case 4:  // insert a dictionary token
        if (!dictionary_.empty()) b.insert(pos(b), dictionary_[rng_() % dictionary_.size()]);
        break;
      case 5: {  // duplicate a span
        if (b.empty()) break;
        const std::size_t at = rng_() % b.size();
        b.insert(pos(b), b.substr(at, 1 + rng_() % 64));
        break;
      }
      case 6:  // truncate
        b.resize(pos(b));
        break;
      case 7: {  // splice another input's span in
        if (corpus.empty()) break;
        const Bytes& o = corpus[rng_() % corpus.size()];
        if (o.empty()) break;
        const std::size_t at = rng_() % o.size();
        b.insert(pos(b), o.substr(at, 1 + rng_() % 256));
        break;
      }
      default: {  // an interesting number in place of a digit
        static const char* numbers[] = {"0",
                                        "-1",
                                        "1",
                                        "255",
                                        "256",
                                        "65535",
                                        "65536",
                                        "2147483647",
                                        "-2147483648",
                                        "4294967296",
                                        "9223372036854775807",
                                        "1e308",
                                        "-0",
                                        "0.5"};
        const std::size_t p = b.find_first_of("0123456789", pos(b));
        if (p != Bytes::npos) b.replace(p, 1, numbers[rng_() % (sizeof numbers / sizeof *numbers)]);
        break;
      }
    }
  }

  std::mt19937 rng_;
  std::vector<Bytes> dictionary_;
};

// The input being run, written out if the run dies.
const Bytes* g_current = nullptr;

void save_current(int) {
  if (g_current) {
    const char* dir = std::getenv("FUZZ_CRASH_DIR");
    const fs::path out = fs::path(dir ? dir : ".") / "fuzz-crash-input";
    std::ofstream(out, std::ios::binary) << *g_current;
    std::fprintf(stderr, "the failing input is in %s\n", out.c_str());
  }
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

void run(const Bytes& b) {
  g_current = &b;
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(b.data()), b.size());
  g_current = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  std::uint32_t seed = 1;
  std::vector<Bytes> dictionary;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (a == "--dict" && i + 1 < argc) {
      dictionary = read_dictionary(argv[++i]);
    } else {
      inputs.emplace_back(a);
    }
  }
  std::signal(SIGABRT, save_current);  // sanitizers and failed properties end in abort()
  std::vector<Bytes> corpus;
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(in)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());  // the same order everywhere: reproducible runs
      for (const auto& f : files) corpus.push_back(read_file(f));
    } else {
      corpus.push_back(read_file(in));
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "no corpus: give folders or files\n");
    return 2;
  }
  for (const auto& b : corpus) run(b);
  Mutator mutator(seed, dictionary);
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(seconds));
  std::uint64_t runs = 0;
  std::mt19937 pick(seed ^ 0x9e3779b9u);
  while (std::chrono::steady_clock::now() < end) {
    const Bytes b = mutator.mutate(corpus[pick() % corpus.size()], corpus);
    run(b);
    ++runs;
  }
  std::printf("%zu corpus inputs and %llu mutants in %.0f s (seed %u): no failure\n", corpus.size(),
              static_cast<unsigned long long>(runs), seconds, seed);
  return 0;
}
