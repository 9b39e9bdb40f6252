// Our own C++ exception probe (tests/recompiler/test_lsda.py reads its exception tables;
// tests/realprogs/test_cxx.py runs it): throws across several frames, a rethrow, catch(...),
// catches by base class, destructors run while unwinding, a nested try inside a handler, and
// callee-saved values the handlers read after the throw.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

struct Guard {
  const char *n;
  int *c;
  ~Guard() {
    std::printf("dtor %s\n", n);
    ++*c;
  }
};
struct Base {
  virtual ~Base() {}
  virtual int f(int x) = 0;
};
struct A : Base {
  int f(int x) override {
    if (x > 3) throw std::runtime_error("A too big " + std::to_string(x));
    return x * 2;
  }
};
struct B : Base {
  int f(int x) override {
    if (x == 2) throw 42;
    if (x == 5) throw std::out_of_range("B five");
    return x + 100;
  }
};

__attribute__((noinline)) int deep(Base *b, int x, int d, int *c) {
  Guard g{"deep", c};
  if (d == 0) return b->f(x);
  return deep(b, x, d - 1, c) + 1;
}

__attribute__((noinline)) int rethrower(Base *b, int x, int *c) {
  try {
    return deep(b, x, 3, c);
  } catch (...) {
    std::printf("rethrow\n");
    throw;
  }
}

__attribute__((noinline)) long nested(int i) {
  try {
    throw std::logic_error("outer " + std::to_string(i));
  } catch (const std::exception &e) {
    try {
      if (i & 1) throw std::string(e.what());
      return 7;
    } catch (const std::string &s) {
      return (long)s.size();
    }
  }
}

int main() {
  int c = 0;
  long acc = 0;
  std::vector<Base *> v{new A, new B};
  for (int i = 0; i < 7; i++)
    for (Base *b : v) {
      long keep = acc * 3 + i;  // a value kept across the call that the handlers read
      double dkeep = keep * 0.5;
      try {
        acc += rethrower(b, i, &c);
      } catch (const std::out_of_range &e) {
        std::printf("caught out_of_range %s keep=%ld %.1f\n", e.what(), keep, dkeep);
        acc += 2 * keep;
      } catch (const std::runtime_error &e) {
        std::printf("caught %s keep=%ld %.1f\n", e.what(), keep, dkeep);
        acc += keep;
      } catch (int e) {
        std::printf("caught int %d keep=%ld\n", e, keep);
        acc -= keep;
      }
    }
  for (int i = 0; i < 4; i++) acc += nested(i);
  Base &second = *v[1];
  std::printf("acc=%ld dtors=%d %s\n", acc, c, typeid(second).name());
  try {
    throw std::vector<int>(3);
  } catch (std::exception &) {
    std::puts("no");
  } catch (...) {
    std::puts("any");
  }
  for (Base *b : v) delete b;
  return 0;
}
