// A vector that keeps its first N elements inside the object: call arguments are
// evaluated for every filter, test, method and macro call, almost always fewer than
// four, and a heap allocation per call cost more than the call itself.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <utility>

namespace chatwire::jinja {

template <typename T, std::size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  SmallVector(const SmallVector& other) {
    reserve(other.size_);
    std::uninitialized_copy_n(other.data_, other.size_, data_);
    size_ = other.size_;
  }
  SmallVector& operator=(const SmallVector&) = delete;
  ~SmallVector() {
    std::destroy_n(data_, size_);
    if (data_ != inline_data()) ::operator delete(data_);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT: as CallArgs views

  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) grow(capacity_ * 2);
    T* slot = ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  void push_back(const T& v) { emplace_back(v); }
  void clear() {
    std::destroy_n(data_, size_);
    size_ = 0;
  }
  void push_back(T&& v) { emplace_back(std::move(v)); }

 private:
  T* inline_data() { return reinterpret_cast<T*>(inline_); }
  void grow(std::size_t n) {
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
    std::uninitialized_move_n(data_, size_, fresh);
    std::destroy_n(data_, size_);
    if (data_ != inline_data()) ::operator delete(data_);
    data_ = fresh;
    capacity_ = n;
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inline_data();
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
};

}  // namespace chatwire::jinja
