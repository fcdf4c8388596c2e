// SmallVector: the inline-storage vector that holds tensor geometry
// (Note [Per-op allocations] in tensor.h).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "npgrad/tensor/tensor.h"
#include "npgrad/util/small_vector.h"

using npgrad::Shape;
using npgrad::SmallVector;

TEST_CASE("SmallVector keeps up to N values inline and grows onto the heap") {
  SmallVector<int64_t, 3> v;
  const int64_t* inline_data = v.data();
  v.push_back(1);
  v.push_back(2);
  v.push_back(3);
  CHECK(v.data() == inline_data);
  CHECK(v.capacity() == 3);
  v.push_back(4);  // spills
  CHECK(v.data() != inline_data);
  CHECK(v.size() == 4);
  CHECK(v.vec() == std::vector<int64_t>{1, 2, 3, 4});
  v.push_back(v[0]);  // an element of the vector itself, across a regrowth
  CHECK(v.back() == 1);
  v.clear();
  CHECK(v.empty());
}

TEST_CASE("SmallVector copies and moves inline and heap storage") {
  SmallVector<int64_t, 2> small{7, 8};
  SmallVector<int64_t, 2> big{1, 2, 3, 4, 5};
  SmallVector<int64_t, 2> a = small;
  SmallVector<int64_t, 2> b = big;
  CHECK(a == small);
  CHECK(b == big);
  CHECK(b.data() != big.data());  // a deep copy
  const int64_t* heap = b.data();
  SmallVector<int64_t, 2> c = std::move(b);
  CHECK(c.data() == heap);  // heap storage is stolen
  CHECK(b.empty());
  SmallVector<int64_t, 2> d = std::move(a);
  CHECK(d.vec() == std::vector<int64_t>{7, 8});
  d = big;  // inline -> heap
  CHECK(d == big);
  d = small;  // heap capacity reused
  CHECK(d == small);
  d = d;  // NOLINT: self-assignment is a no-op
  CHECK(d == small);
}

TEST_CASE("SmallVector edits like std::vector") {
  Shape s{2, 3, 4};
  s.insert(s.begin() + 1, 9);
  CHECK(s.vec() == std::vector<int64_t>{2, 9, 3, 4});
  s.erase(s.begin());
  CHECK(s.vec() == std::vector<int64_t>{9, 3, 4});
  std::vector<int64_t> more{5, 6, 7, 8, 9};
  s.insert(s.end(), more.begin(), more.end());
  CHECK(s.size() == 8);  // beyond the inline capacity of a Shape
  CHECK(s.vec() == std::vector<int64_t>{9, 3, 4, 5, 6, 7, 8, 9});
  s.erase(s.begin() + 2, s.end());
  CHECK(s.vec() == std::vector<int64_t>{9, 3});
  s.resize(4, 1);
  CHECK(s.vec() == std::vector<int64_t>{9, 3, 1, 1});
  s.pop_back();
  CHECK(s.size() == 3);
  CHECK(
      std::vector<int64_t>(s.rbegin(), s.rend()) ==
      std::vector<int64_t>{1, 3, 9});
  Shape from_vector = std::vector<int64_t>{4, 5};
  CHECK(from_vector == Shape{4, 5});
  CHECK(from_vector != Shape{4});
  CHECK(Shape{1, 2} < Shape{1, 3});
}
