#include "tacos/common/link_model.h"

#include "tacos/common/error.h"

namespace tacos {

LinkModel parse_link_model(std::string_view text) {
  if (text == "tacos") return LinkModel::kTacos;
  if (text == "astra") return LinkModel::kAstra;
  throw Error("--link-model: expected 'tacos' or 'astra', got '" + std::string(text) + "'");
}

std::string to_string(LinkModel model) { return model == LinkModel::kTacos ? "tacos" : "astra"; }

}  // namespace tacos
