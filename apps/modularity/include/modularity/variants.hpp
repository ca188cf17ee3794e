#pragma once
// The run-time choices of the MESH paper's experiment, as the templates
// they select: the consistency controller (none, Broadcast, Overlapped
// Broadcast, Timestamp) and the map variant (all DCM, all NCM, all WT, or
// the paper's Mix: the static graph in DCM, the maps the moves change in WT).
//
//   modularity::with_variant(controller, maps, [&]<map_memory G, map_memory M, class C>() { ... });
#include <stdexcept>
#include <string>
#include <string_view>

#include <mesh/mesh.hpp>

namespace modularity {

enum class controller_kind { none, broadcast, overlapped, timestamp };
enum class maps_kind { dcm, ncm, wt, mix };

inline constexpr controller_kind all_controllers[] = {controller_kind::none, controller_kind::broadcast,
                                                      controller_kind::overlapped, controller_kind::timestamp};
inline constexpr maps_kind all_maps[] = {maps_kind::dcm, maps_kind::ncm, maps_kind::wt, maps_kind::mix};

inline const char* name(controller_kind c) {
    switch (c) {
    case controller_kind::none: return "none";
    case controller_kind::broadcast: return "broadcast";
    case controller_kind::overlapped: return "overlapped";
    case controller_kind::timestamp: return "timestamp";
    }
    return "?";
}
inline const char* name(maps_kind m) {
    switch (m) {
    case maps_kind::dcm: return "dcm";
    case maps_kind::ncm: return "ncm";
    case maps_kind::wt: return "wt";
    case maps_kind::mix: return "mix";
    }
    return "?";
}

inline controller_kind parse_controller(std::string_view s) {
    for (auto c : all_controllers)
        if (s == name(c)) return c;
    throw std::invalid_argument("unknown controller '" + std::string(s) + "' (none, broadcast, overlapped, timestamp)");
}
inline maps_kind parse_maps(std::string_view s) {
    for (auto m : all_maps)
        if (s == name(m)) return m;
    throw std::invalid_argument("unknown map variant '" + std::string(s) + "' (dcm, ncm, wt, mix)");
}

/// f.template operator()<G, M, C>() with G the memory of the static graph's
/// maps, M that of the clustering's, C the controller.
template <class F>
decltype(auto) with_variant(controller_kind controller, maps_kind maps, F&& f) {
    using mesh::map_memory;
    auto with_controller = [&]<map_memory G, map_memory M>() -> decltype(auto) {
        switch (controller) {
        case controller_kind::none: return f.template operator()<G, M, mesh::controllers::noop>();
        case controller_kind::broadcast: return f.template operator()<G, M, mesh::controllers::broadcast>();
        case controller_kind::overlapped:
            return f.template operator()<G, M, mesh::controllers::overlapped_broadcast>();
        case controller_kind::timestamp: return f.template operator()<G, M, mesh::controllers::timestamp>();
        }
        throw std::invalid_argument("unknown controller");
    };
    switch (maps) {
    case maps_kind::dcm: return with_controller.template operator()<map_memory::dcm, map_memory::dcm>();
    case maps_kind::ncm: return with_controller.template operator()<map_memory::ncm, map_memory::ncm>();
    case maps_kind::wt: return with_controller.template operator()<map_memory::wt, map_memory::wt>();
    case maps_kind::mix: return with_controller.template operator()<map_memory::dcm, map_memory::wt>();
    }
    throw std::invalid_argument("unknown map variant");
}

} // namespace modularity
