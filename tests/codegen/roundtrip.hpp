#pragma once
// What both round-trip tests compare: a generated array with the committed .npy it came from, bit
// for bit, and two settings structs field by field (the checkpoint's digest visits every field).
#include "npy_test_io.hpp"

#include <pbrl/solver/checkpoint.hpp>

#include <cstring>
#include <string>
#include <vector>

#ifndef PBRL_CODEGEN_MODEL_DIR
#error "PBRL_CODEGEN_MODEL_DIR must name tests/codegen/model"
#endif

template <typename Scalar, std::size_t N>
bool same_bits(const Scalar (&generated)[N], const std::string& npy) {
  const std::vector<Scalar> source = npy_test::read_data<Scalar>(PBRL_CODEGEN_MODEL_DIR "/" + npy);
  return source.size() == N && std::memcmp(source.data(), generated, sizeof generated) == 0;
}

template <class Settings>
std::uint32_t digest(const Settings& s) {
  pbrl::detail::SettingsDigest d;
  s.visit(d);
  return d.crc;
}
