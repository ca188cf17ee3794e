#pragma once
// Inference at load: the data closed under the RDFS and OWL 2 RL rules that
// LUBM needs, so that raw LUBM data with univ-bench.owl answers the 14
// queries as the pre-inferred file does (the step RDF-3X leaves to others).
//
// Rules (OWL 2 RL names): cax-sco, scm-sco/eqc (subclass hierarchy),
// prp-spo1, scm-spo/eqp (subproperty), prp-dom, prp-rng, prp-inv1/2,
// prp-symp, prp-trp, cls-int1, cls-int2, cls-svf1.
//
// The schema is compiled once a round into tables (a property's
// expansions: every (super)property and inverse its triples imply, with
// direction; a class's superclasses, intersection components included),
// then the data is closed in rounds: each round every worker derives, for
// the subjects of its partition (id mod workers), what the rules give from
// the store as it stands, skipping triples already present; the new triples
// are merged and the next round sees them. Rounds end when one adds
// nothing: derivations that need another's result (a type from an
// existential restriction that an intersection then uses) take one round
// each, LUBM needs four. The rounds' work splits across cores without
// coordination inside a round, which is how infer_round runs on TACO cores
// (engine.hpp): each core closes its partition against the shared store.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <rdf/store.hpp>

namespace rdf {

namespace vocabulary {
inline constexpr std::string_view rdfs = "http://www.w3.org/2000/01/rdf-schema#";
inline constexpr std::string_view owl = "http://www.w3.org/2002/07/owl#";
inline constexpr std::string_view rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
} // namespace vocabulary

/// The schema, compiled for one round.
class schema {
public:
    explicit schema(const store_view& v) : v_(v) {
        auto id = [&](std::string_view ns, std::string_view local) {
            std::string k = "<";
            k += ns;
            k += local;
            k += '>';
            return v.dict.find(k);
        };
        type_ = id(vocabulary::rdf, "type");
        const term_id sub_class = id(vocabulary::rdfs, "subClassOf"), sub_property = id(vocabulary::rdfs, "subPropertyOf"),
                      domain = id(vocabulary::rdfs, "domain"), range = id(vocabulary::rdfs, "range"),
                      inverse = id(vocabulary::owl, "inverseOf"), eq_class = id(vocabulary::owl, "equivalentClass"),
                      eq_property = id(vocabulary::owl, "equivalentProperty"),
                      transitive = id(vocabulary::owl, "TransitiveProperty"), symmetric = id(vocabulary::owl, "SymmetricProperty"),
                      intersection = id(vocabulary::owl, "intersectionOf"), on_property = id(vocabulary::owl, "onProperty"),
                      some = id(vocabulary::owl, "someValuesFrom"), first = id(vocabulary::rdf, "first"),
                      rest = id(vocabulary::rdf, "rest");

        std::unordered_map<term_id, std::vector<term_id>> class_up, property_up;
        each(sub_class, [&](term_id a, term_id b) { class_up[a].push_back(b); });
        each(eq_class, [&](term_id a, term_id b) {
            class_up[a].push_back(b);
            class_up[b].push_back(a);
        });
        each(sub_property, [&](term_id a, term_id b) { property_up[a].push_back(b); });
        each(eq_property, [&](term_id a, term_id b) {
            property_up[a].push_back(b);
            property_up[b].push_back(a);
        });
        each(inverse, [&](term_id a, term_id b) {
            inverse_[a].push_back(b);
            inverse_[b].push_back(a);
        });
        if (type_ != no_term) {
            for (term_id p : objects_of_type(transitive)) transitive_.insert(p);
            for (term_id p : objects_of_type(symmetric)) inverse_[p].push_back(p);
        }
        each(domain, [&](term_id p, term_id c) { domain_[p].push_back(c); });
        each(range, [&](term_id p, term_id c) { range_[p].push_back(c); });
        // Existential restrictions: x R y, y a B => x a r.
        each(on_property, [&](term_id r, term_id p) {
            if (const term_id b = object(r, some); b != no_term) restrictions_[p].push_back({r, b});
        });
        // Intersections: C = A1 and ... and An; cls-int2 makes each Ai a superclass of C.
        each(intersection, [&](term_id c, term_id list) {
            std::vector<term_id> parts;
            for (std::size_t guard = 0; list != no_term && guard < 4096; ++guard) {
                const term_id item = object(list, first);
                if (item == no_term) break;
                parts.push_back(item);
                list = object(list, rest);
            }
            if (parts.empty()) return;
            for (term_id a : parts) class_up[c].push_back(a);
            intersections_.push_back({c, std::move(parts)});
        });
        close(class_up, superclasses_);
        close(property_up, superproperties_);
        for (std::size_t k = 0; k < intersections_.size(); ++k)
            for (term_id a : intersections_[k].parts) member_of_[a].push_back(k);
    }

    term_id type() const noexcept { return type_; }
    bool usable() const noexcept { return type_ != no_term; }

    /// Classes implied by being a C: C and its superclasses.
    const std::vector<term_id>& up_classes(term_id c) {
        auto it = superclasses_.find(c);
        if (it != superclasses_.end()) return it->second;
        return superclasses_.emplace(c, std::vector<term_id>{c}).first->second;
    }

    /// What a triple (x P y) implies: (Q, inverted) for every Q it entails
    /// (Q with x, y swapped if inverted), P itself first.
    struct expansion {
        term_id property;
        bool inverted;
    };
    const std::vector<expansion>& expansions(term_id p) {
        if (auto it = expansions_.find(p); it != expansions_.end()) return it->second;
        std::vector<expansion> out{{p, false}};
        for (std::size_t i = 0; i < out.size(); ++i) {
            const expansion e = out[i];
            auto add = [&](expansion n) {
                for (const expansion& o : out)
                    if (o.property == n.property && o.inverted == n.inverted) return;
                out.push_back(n);
            };
            if (auto s = superproperties_.find(e.property); s != superproperties_.end())
                for (term_id q : s->second) add({q, e.inverted});
            if (auto s = inverse_.find(e.property); s != inverse_.end())
                for (term_id q : s->second) add({q, !e.inverted});
        }
        return expansions_.emplace(p, std::move(out)).first->second;
    }

    const std::vector<term_id>* domain(term_id p) const { return find(domain_, p); }
    const std::vector<term_id>* range(term_id p) const { return find(range_, p); }
    bool transitive(term_id p) const { return transitive_.count(p) != 0; }
    struct restriction {
        term_id node, filler;
    };
    const std::vector<restriction>* restrictions(term_id p) const { return find(restrictions_, p); }

    struct intersection_def {
        term_id cls;
        std::vector<term_id> parts;
    };
    const std::vector<intersection_def>& intersections() const noexcept { return intersections_; }
    /// The intersections that have class c among their parts.
    const std::vector<std::size_t>* intersections_with(term_id c) const { return find(member_of_, c); }

private:
    template <class Map>
    static auto find(const Map& m, term_id k) -> const typename Map::mapped_type* {
        auto it = m.find(k);
        return it == m.end() ? nullptr : &it->second;
    }

    template <class F>
    void each(term_id p, F&& f) const {
        if (p == no_term) return;
        const permutation_view& pso = v_[order::pso];
        const index_range r = pso.of(p);
        for (std::uint32_t i = r.begin; i < r.end; ++i) f(pso.second[i], pso.third[i]);
    }
    term_id object(term_id s, term_id p) const {
        if (s == no_term || p == no_term) return no_term;
        const permutation_view& spo = v_[order::spo];
        const index_range r = spo.of(spo.of(s), p);
        return r.empty() ? no_term : spo.third[r.begin];
    }
    std::vector<term_id> objects_of_type(term_id cls) const {
        std::vector<term_id> out;
        if (cls == no_term) return out;
        const permutation_view& pos = v_[order::pos];
        const index_range r = pos.of(pos.of(type_), cls);
        for (std::uint32_t i = r.begin; i < r.end; ++i) out.push_back(pos.third[i]);
        return out;
    }
    /// Reflexive-transitive closure of an up-graph (DFS per node).
    static void close(const std::unordered_map<term_id, std::vector<term_id>>& up,
                      std::unordered_map<term_id, std::vector<term_id>>& out) {
        for (const auto& [start, direct] : up) {
            std::vector<term_id> seen{start}, todo{start};
            while (!todo.empty()) {
                const term_id c = todo.back();
                todo.pop_back();
                auto it = up.find(c);
                if (it == up.end()) continue;
                for (term_id d : it->second)
                    if (std::find(seen.begin(), seen.end(), d) == seen.end()) {
                        seen.push_back(d);
                        todo.push_back(d);
                    }
            }
            out[start] = std::move(seen);
        }
    }

    const store_view& v_;
    term_id type_ = no_term;
    std::unordered_map<term_id, std::vector<term_id>> superclasses_, superproperties_, inverse_, domain_, range_;
    std::unordered_map<term_id, std::vector<expansion>> expansions_;
    std::unordered_set<term_id> transitive_;
    std::unordered_map<term_id, std::vector<restriction>> restrictions_;
    std::vector<intersection_def> intersections_;
    std::unordered_map<term_id, std::vector<std::size_t>> member_of_;
};

/// One round for the subjects x with x % parts == part: the triples the
/// rules derive from the store as it is, that it does not hold yet (a
/// triple may come twice; the store removes duplicates).
inline std::vector<triple> infer_round(const store_view& v, std::uint32_t part = 0, std::uint32_t parts = 1) {
    std::vector<triple> out;
    schema sc(v);
    if (!sc.usable()) return out;
    const term_id type = sc.type();
    const permutation_view& spo = v[order::spo];
    auto is_literal = [&](term_id t) { return v.dict.key(t).starts_with('"'); };
    auto has = [&](term_id s, term_id p, term_id o) { return spo.contains(s, p, o); };
    auto emit = [&](term_id s, term_id p, term_id o) {
        if (!is_literal(s) && !has(s, p, o)) out.push_back({s, p, o});
    };
    std::vector<term_id> types, reach, todo;
    auto add_type = [&](term_id c) {
        for (term_id u : sc.up_classes(c))
            if (std::find(types.begin(), types.end(), u) == types.end()) types.push_back(u);
    };
    term_id x = 0;
    // x's own types are collected (cls-int1 needs all of them); another
    // subject's are emitted with their superclasses.
    auto give_type = [&](term_id subject, term_id c) {
        if (subject == x) add_type(c);
        else
            for (term_id u : sc.up_classes(c)) emit(subject, type, u);
    };
    const std::size_t subjects = spo.offsets.empty() ? 0 : spo.offsets.size() - 1;
    for (std::size_t xs = part; xs < subjects; xs += parts) {
        x = term_id(xs);
        const index_range all = spo.of(x);
        if (all.empty() || is_literal(x)) continue;
        types.clear();
        for (std::uint32_t i = all.begin; i < all.end; ++i) {
            const term_id p = spo.second[i], y = spo.third[i];
            if (p == type) {
                add_type(y);
                continue;
            }
            for (const auto& [q, inverted] : sc.expansions(p)) {
                const term_id s = inverted ? y : x, o = inverted ? x : y;
                if (is_literal(s)) continue;
                if (q != p || inverted) emit(s, q, o);
                if (const auto* d = sc.domain(q))
                    for (term_id c : *d) give_type(s, c);
                if (const auto* r = sc.range(q); r && !is_literal(o))
                    for (term_id c : *r) give_type(o, c);
                if (const auto* rs = sc.restrictions(q))
                    for (const auto& restriction : *rs)
                        if (has(o, type, restriction.filler)) give_type(s, restriction.node);
                if (!inverted && sc.transitive(q)) { // prp-trp, all the way along q from y
                    reach.assign(1, y);
                    todo.assign(1, y);
                    while (!todo.empty()) {
                        const term_id z = todo.back();
                        todo.pop_back();
                        const index_range r = spo.of(spo.of(z), q);
                        for (std::uint32_t k = r.begin; k < r.end; ++k)
                            if (std::find(reach.begin(), reach.end(), spo.third[k]) == reach.end()) {
                                reach.push_back(spo.third[k]);
                                todo.push_back(spo.third[k]);
                                emit(x, q, spo.third[k]);
                            }
                    }
                }
            }
        }
        // cls-int1: every part of an intersection held => its class.
        for (std::size_t i = 0; i < types.size(); ++i)
            if (const auto* with = sc.intersections_with(types[i]))
                for (std::size_t k : *with) {
                    const auto& in = sc.intersections()[k];
                    if (std::all_of(in.parts.begin(), in.parts.end(),
                                    [&](term_id a) { return std::find(types.begin(), types.end(), a) != types.end(); }))
                        add_type(in.cls);
                }
        for (term_id c : types) emit(x, type, c);
    }
    return out;
}

struct inference_report {
    std::uint64_t added = 0;
    unsigned rounds = 0;
    double seconds = 0;
};

/// Close `s` under the rules on this core, round by round.
inline inference_report infer(store& s) {
    inference_report r;
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        ++r.rounds;
        const std::uint64_t added = s.add_encoded(infer_round(s.view()));
        r.added += added;
        if (added == 0) break;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

} // namespace rdf
