#pragma once
// The model a manifest describes, read and validated in the model's scalar: every array rounded
// to Scalar as the device will hold it, then checked with the library's own runtime-size checks
// (pbrl::detail in config.hpp, mdp.hpp, regularizer.hpp) and its scalar checks (validate_discount,
// valid(Box), the settings' domains). What the tool adds is the message: which entry or row failed
// and why. Nothing here writes a file.

#include "kinds.hpp"
#include "manifest.hpp"

#include <pbrl/model/problem.hpp>
#include <pbrl/model/regularizer.hpp>

#include <string>
#include <vector>

namespace codegen {

// The scalar-independent part: what the manifest says before any array is read.
struct Manifest {
  std::string path;  // as given on the command line (refusals name it)
  std::string dir;   // array files are relative to it
  std::string name;
  const KindSpec* spec = nullptr;
  bool single = false;             // scalar float (else double)
  std::vector<long long> sizes;    // spec->sizes' values
  long long ram_limit_bytes = -1;  // -1: none given
  // "estimate" given: the lower level's transition array is the prior of a TransitionEstimate the
  // device refines (estimate/estimated_model.hpp); count: its count type's name.
  bool estimated = false;
  std::string count = "float";
};

// The count types an estimate's manifest may name, and their C++ types.
const std::vector<std::pair<std::string, std::string>>& count_types();

// Reads name, kind, scalar and the sizes, and refuses any key the kind does not have.
Manifest read_manifest(const std::string& path, const Json& root);

template <typename Scalar>
struct ModelArray {
  std::string field;  // Data member, dotted for a regularizer's reference
  std::string file;   // the path refusals name
  std::string name;   // as the manifest gives it (relative to the manifest's directory)
  Shape shape;
  std::vector<std::string> axes;  // the sizes' manifest names, one per axis
  std::vector<Scalar> values;
  std::string constant() const;  // its name in the model header: kDesignerReward, kLowerReference
};

template <typename Scalar>
struct ModelRegularizer {
  const RegularizerSpec* spec = nullptr;
  pbrl::RegularizerKind kind = pbrl::RegularizerKind::entropy;
  Scalar tau = Scalar(0);
  int reference = -1;  // index into Model::arrays (kl_reference)
};

template <typename Scalar>
struct ModelScalar {
  const ScalarSpec* spec = nullptr;
  Scalar value = Scalar(0);
  bool library_default = false;  // not in the manifest: Data's default
};

template <typename Scalar>
struct Model {
  Manifest manifest;
  Scalar discount = Scalar(0);
  std::vector<ModelArray<Scalar>> arrays;  // the kind's arrays that are given, then references
  std::vector<ModelRegularizer<Scalar>> regularizers;
  pbrl::Box<Scalar> box{};                   // spec->box
  std::vector<ModelScalar<Scalar>> scalars;  // spec->scalars, in order

  const ModelArray<Scalar>* array(const std::string& field) const;
  std::size_t flash_bytes() const;
};

// Reads every scalar and array of the model and validates it; the first fault is refused.
template <typename Scalar>
Model<Scalar> load_model(const Manifest& manifest, const Json& root);

// Flash bytes of the arrays the manifest gives, and the RAM estimate (kinds.hpp), before any file
// is read: refused when their sum exceeds ram_limit_bytes.
void check_ram_limit(const Manifest& manifest, const Json& root);

}  // namespace codegen
