#pragma once
// A vector of trivially copyable values with room for N of them inline (like
// c10::SmallVector, which at::IntArrayRef-holding code uses for sizes and
// strides). Tensor shapes almost never exceed a handful of dims, so a tensor's
// sizes and strides, and the shapes kept in node metadata, cost no heap
// allocation: with std::vector, every small tensor paid two mallocs and two
// frees for its geometry (Note [Per-op allocations] in tensor.h).

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <vector>

namespace npgrad {

template <typename T, std::size_t N>
class SmallVector {
  static_assert(
      std::is_trivially_copyable_v<T>, "SmallVector holds plain values");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() = default;
  explicit SmallVector(size_type n) { resize(n); }
  SmallVector(size_type n, const T& value) { resize(n, value); }
  SmallVector(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // Implicit both ways with std::vector: shapes cross the binding layer and
  // a few kernels' interfaces as std::vector.
  SmallVector(const std::vector<T>& v) {  // NOLINT(google-explicit-constructor)
    assign(v.begin(), v.end());
  }
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(std::move(other)); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      assign(other.begin(), other.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(std::move(other));
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~SmallVector() { release(); }

  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const {  // NOLINT(google-explicit-constructor)
    return vec();
  }

  size_type size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_type capacity() const { return capacity_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_type i) { return data_[i]; }
  const T& operator[](size_type i) const { return data_[i]; }
  T& at(size_type i) { return data_[i]; }
  const T& at(size_type i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const {
    return const_reverse_iterator(end());
  }
  const_reverse_iterator rend() const {
    return const_reverse_iterator(begin());
  }

  void reserve(size_type n) {
    if (n <= capacity_) {
      return;
    }
    T* fresh = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (fresh == nullptr) {
      throw std::bad_alloc();
    }
    if (size_ > 0) {
      std::memcpy(fresh, data_, size_ * sizeof(T));
    }
    release();
    data_ = fresh;
    capacity_ = n;
  }
  void clear() { size_ = 0; }
  void resize(size_type n) { resize(n, T()); }
  void resize(size_type n, const T& value) {
    if (n > size_) {
      grow_to(n);
      std::fill(data_ + size_, data_ + n, value);
    }
    size_ = n;
  }
  void push_back(const T& value) {
    if (size_ == capacity_) {
      T copy = value;  // value may live in this vector
      grow_to(size_ + 1);
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = value;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() { --size_; }
  template <typename It>
  void assign(It first, It last) {
    auto n = static_cast<size_type>(std::distance(first, last));
    if (n > capacity_) {
      size_ = 0;
      reserve(n);
    }
    std::copy(first, last, data_);
    size_ = n;
  }
  void assign(size_type n, const T& value) {
    size_ = 0;
    resize(n, value);
  }
  iterator insert(const_iterator pos, const T& value) {
    auto i = static_cast<size_type>(pos - data_);
    T copy = value;
    grow_to(size_ + 1);
    std::memmove(data_ + i + 1, data_ + i, (size_ - i) * sizeof(T));
    data_[i] = copy;
    ++size_;
    return data_ + i;
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  iterator insert(const_iterator pos, It first, It last) {
    auto i = static_cast<size_type>(pos - data_);
    SmallVector tail(data_ + i, data_ + size_);
    size_ = i;
    for (; first != last; ++first) {
      push_back(*first);
    }
    for (const T& v : tail) {
      push_back(v);
    }
    return data_ + i;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    auto i = static_cast<size_type>(first - data_);
    auto j = static_cast<size_type>(last - data_);
    std::memmove(data_ + i, data_ + j, (size_ - j) * sizeof(T));
    size_ -= j - i;
    return data_ + i;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) {
    return !(a == b);
  }
  friend bool operator<(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool is_inline() const { return data_ == inline_; }
  void release() {
    if (!is_inline()) {
      std::free(data_);
      data_ = inline_;
      capacity_ = N;
    }
  }
  void grow_to(size_type n) {
    if (n > capacity_) {
      reserve(std::max(n, 2 * capacity_));
    }
  }
  void take(SmallVector&& other) {
    if (other.is_inline()) {
      std::memcpy(inline_, other.inline_, other.size_ * sizeof(T));
      data_ = inline_;
      capacity_ = N;
    } else {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = N;
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  T* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = N;
  T inline_[N];
};

}  // namespace npgrad
