// Typed reads of JSON that someone else wrote: a worker's error file, a peer's rendezvous message,
// a probe child's result. nlohmann's value() throws type_error when the field is there with
// another type ({"message": {"message": {}}} in a torch error file); json_field returns the
// fallback instead, and an integer that does not fit T is the fallback too.
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

namespace tv {

template <class T>
T json_field(const nlohmann::json& j, std::string_view key, T fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->template get<bool>() : fallback;
  } else if constexpr (std::is_floating_point_v<T>) {
    return it->is_number() ? it->template get<T>() : fallback;
  } else {
    static_assert(std::is_integral_v<T>);
    if (it->is_number_unsigned()) {
      const auto v = it->template get<std::uint64_t>();
      return v <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()) ? static_cast<T>(v)
                                                                            : fallback;
    }
    if (!it->is_number_integer()) return fallback;
    const auto v = it->template get<std::int64_t>();
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        v > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
      return fallback;
    return static_cast<T>(v);
  }
}

}  // namespace tv
