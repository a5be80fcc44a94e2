// The commit the judge was built from (generated at build time by judge/version.cmake: `git rev-parse HEAD`,
// and whether the working tree differed from it).
#pragma once

namespace solgemm::judge {

const char* build_commit();  // 40 hex digits, or "unknown" outside a git checkout
bool build_dirty();

}  // namespace solgemm::judge
