// Which attempt_<k> directory a container's generation 0 writes (docs/supervision.md, "Output and
// logs"): a --log-dir that outlives the container (FSx, EFS, a host path) holds the attempts of
// earlier containers of the job, which begin at generation 0 too. Generation g of this container
// is attempt_<first + g>, `first` one past the highest attempt_<k> already there, so a new
// container never appends to an old container's files.
#pragma once

#include <string>
#include <vector>

namespace tv {

// One past the highest k of the entries named exactly attempt_<k> (k decimal, at most 9 digits);
// 0 when there is none.
int first_free_attempt(const std::vector<std::string>& entries);

}  // namespace tv
