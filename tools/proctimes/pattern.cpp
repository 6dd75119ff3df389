// SPDX-License-Identifier: MIT
#include "pattern.hpp"

#include <re2/re2.h>

#include "utf8.hpp"

namespace proctimes::cli {

std::shared_ptr<const pattern> pattern::compile(std::string_view expr, std::string& error) {
    RE2::Options o;
    o.set_log_errors(false);  // the caller reports the error
    o.set_encoding(RE2::Options::EncodingUTF8);
    std::shared_ptr<pattern> p(new pattern);
    p->re_ = std::make_unique<re2::RE2>(re2::StringPiece(expr.data(), expr.size()), o);
    if (!p->re_->ok()) {
        error = p->re_->error();
        return nullptr;
    }
    p->text_ = std::string(expr);
    return p;
}

pattern::~pattern() = default;

bool pattern::search(std::string_view text) const {
    std::string scratch;
    const std::string_view t = as_utf8(text, scratch);
    return re_->Match(re2::StringPiece(t.data(), t.size()), 0, t.size(), RE2::UNANCHORED, nullptr, 0);
}

bool pattern::search(std::string_view text, std::vector<std::pair<std::string, std::string>>& named) const {
    const auto& groups = re_->NamedCapturingGroups();
    if (groups.empty()) return search(text);
    std::string scratch;
    const std::string_view t = as_utf8(text, scratch);
    std::vector<re2::StringPiece> sub(static_cast<std::size_t>(re_->NumberOfCapturingGroups()) + 1);
    if (!re_->Match(re2::StringPiece(t.data(), t.size()), 0, t.size(), RE2::UNANCHORED, sub.data(),
                    static_cast<int>(sub.size())))
        return false;
    for (const auto& [name, index] : groups) {
        const re2::StringPiece& s = sub.at(static_cast<std::size_t>(index));
        named.emplace_back(name, std::string(s.data() == nullptr ? "" : std::string(s.data(), s.size())));
    }
    return true;
}

bool pattern::search_captures(std::string_view text, std::vector<std::pair<std::string, std::string>>& captures) const {
    std::string scratch;
    const std::string_view t = as_utf8(text, scratch);
    const auto n = static_cast<std::size_t>(re_->NumberOfCapturingGroups()) + 1;
    std::vector<re2::StringPiece> sub(n);
    if (!re_->Match(re2::StringPiece(t.data(), t.size()), 0, t.size(), RE2::UNANCHORED, sub.data(),
                    static_cast<int>(n)))
        return false;
    const auto& names = re_->CapturingGroupNames();  // index -> name, for the named ones
    for (std::size_t i = 0; i < n; ++i) {
        const auto it = names.find(static_cast<int>(i));
        const re2::StringPiece& s = sub[i];
        captures.emplace_back(it == names.end() ? std::string() : it->second,
                              s.data() == nullptr ? std::string() : std::string(s.data(), s.size()));
    }
    return true;
}

}  // namespace proctimes::cli
