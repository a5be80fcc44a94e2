// The seed's measured tables (lab1_roofline.py): SGLang's and the seed submission's judge times, in us, for the
// 30 scored shapes. Indexed [load][layer] in the order of shapes.hpp (loads(), layers()).
#pragma once

#include <array>

#include "shapes.hpp"

namespace solgemm::judge {

using SeedTable = std::array<std::array<double, kLayerCount>, kLoadCount>;
const SeedTable& seed_sglang_us();
const SeedTable& seed_submission_us();
// The seed's official score of its submission against SGLang (lab1 prints 1.3429 from the rounded tables).
inline constexpr double kSeedOfficialScore = 1.3428;

}  // namespace solgemm::judge
