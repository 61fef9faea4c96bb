// SPDX-License-Identifier: MIT
// C++'s allocations under libfastmmc-malloc.so: libstdc++'s operator new and delete (plain,
// sized, nothrow, array and aligned) call malloc, free and aligned_alloc, so every block a
// container or a new-expression makes is the manager's. Linked to the library
// (test_malloc_cxx_linked) and run under LD_PRELOAD (test_malloc_cxx_preload); prints a digest of
// its work that the test compares with the same program's under the C library's malloc (run
// with no argument there).
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

static int (*owns)(const void *p);
static unsigned failures;

static void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "test_malloc_cxx: FAILED %s\n", what);
    failures++;
  }
}

struct alignas(256) Wide {
  unsigned char bytes[300];
};

// With the argument "ours" the program fails unless the manager serves it.
int main(int argc, char **argv) {
  *reinterpret_cast<void **>(&owns) = dlsym(RTLD_DEFAULT, "fastmm_owns_block");
  bool ours = owns != nullptr;
  if (argc > 1 && std::string(argv[1]) == "ours")
    check(ours, "fastmm_owns_block found (the library is loaded)");

  int *one = new int(7);
  check(!ours || owns(one), "new int is the manager's");
  delete one;
  int *many = new int[1000]();
  check(!ours || owns(many), "new int[] is the manager's");
  delete[] many;
  int *quiet = new (std::nothrow) int[10];
  check(quiet != nullptr && (!ours || owns(quiet)), "nothrow new[]");
  delete[] quiet;
  Wide *w = new Wide();
  check((reinterpret_cast<std::uintptr_t>(w) & 255u) == 0, "aligned new is aligned");
  check(!ours || owns(w), "aligned new is the manager's");
  delete w;
  Wide *ws = new Wide[5];
  check((reinterpret_cast<std::uintptr_t>(ws) & 255u) == 0, "aligned new[] is aligned");
  delete[] ws;
  bool threw = false;
  try {
    std::vector<char> huge(SIZE_MAX / 4);
  } catch (const std::bad_alloc &) {
    threw = true;
  }
  check(threw, "a huge vector throws bad_alloc");

  std::vector<std::string> words;
  std::map<std::string, std::size_t> counts;
  std::uint64_t digest = 1469598103934665603u;
  for (std::size_t i = 0; i < 200000; i++) {
    std::string s = "word" + std::to_string((i * 7919u) % 5003u);
    s.append(i % 37, static_cast<char>('a' + i % 26));
    counts[s]++;
    words.push_back(std::move(s));
    if (words.size() > 5000)
      words.erase(words.begin(), words.begin() + 2500);
  }
  check(!ours || owns(words.data()), "a vector's storage is the manager's");
  for (const auto &kv : counts)
    for (char c : kv.first)
      digest = (digest ^ static_cast<unsigned char>(c)) * 1099511628211u ^ kv.second;
  auto shared = std::make_shared<std::vector<double>>(10000, 1.5);
  double sum = 0;
  for (double d : *shared)
    sum += d;
  std::printf("distinct %zu, kept %zu, digest %016llx, sum %.1f\n", counts.size(), words.size(),
              static_cast<unsigned long long>(digest), sum);
  if (failures != 0)
    return 1;
  return 0;
}
