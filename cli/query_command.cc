// `trainvisor __query KIND [ARG]`: the child side of health/isolated_query.h.
#include "cli/commands.h"
#include "health/isolated_query.h"

namespace tv {

int query_command(const Args& args, const Environment& env) { return vendor_query_main(args, env); }

}  // namespace tv
