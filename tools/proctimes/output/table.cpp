// SPDX-License-Identifier: MIT
// The table writer, for people: one row per record (threads right after their
// process), the columns of the field list, separated by two spaces. Aligned to
// its contents (the widest cell of each column; trailing blanks cut), or, for a
// table written a line at a time, padded to each column's fixed width.
#include "writers.hpp"

#include <algorithm>
#include <ostream>

namespace proctimes::cli {

std::size_t display_width(std::string_view s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

namespace {

class table_writer final : public record_writer {
public:
    table_writer(std::ostream& out, const field_list& fields, const output_options& opts, layout how)
        : out_(out), columns_(fields.columns), opts_(opts), fixed_(how == layout::stream) {
        std::vector<std::string> header;
        for (const field* c : columns_) header.emplace_back(c->title);
        add(std::move(header));
    }

    void write(const task_record& r) override {
        row(r);
        for (const auto& t : r.threads) row(t);
    }

    void finish() override {
        if (fixed_) return;
        std::vector<std::size_t> width(columns_.size(), 0);
        for (const auto& cells : rows_)
            for (std::size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], display_width(cells[i]));
        for (const auto& cells : rows_) {
            std::string line = join(cells, width);
            while (!line.empty() && line.back() == ' ') line.pop_back();
            line += '\n';
            out_ << line;
        }
        rows_.clear();
    }

    void flush() override { out_.flush(); }

private:
    void row(const task_record& r) {
        std::vector<std::string> cells;
        cells.reserve(columns_.size());
        for (const field* c : columns_) cells.push_back(c->cell(r, opts_));
        add(std::move(cells));
    }

    void add(std::vector<std::string> cells) {
        if (!fixed_) {
            rows_.push_back(std::move(cells));
            return;
        }
        std::vector<std::size_t> width;
        for (const field* c : columns_) width.push_back(c->width);
        out_ << join(cells, width) << '\n';
    }

    // The cells padded to `width` (never cut), as fmt's "{:>7}" / "{:<15}" pad.
    std::string join(const std::vector<std::string>& cells, const std::vector<std::size_t>& width) const {
        std::string line;
        for (std::size_t i = 0; i < cells.size(); ++i) {
            const std::size_t w = display_width(cells[i]);
            const std::size_t pad = width[i] > w ? width[i] - w : 0;
            const bool right = columns_[i]->alignment == align::right;
            if (i > 0) line += "  ";
            if (right) line.append(pad, ' ');
            line += cells[i];
            if (!right) line.append(pad, ' ');
        }
        return line;
    }

    std::ostream& out_;
    std::vector<const field*> columns_;
    output_options opts_;
    bool fixed_;
    std::vector<std::vector<std::string>> rows_;  // header first (aligned tables)
};

}  // namespace

std::unique_ptr<record_writer> open_table_writer(std::ostream& out, const field_list& fields,
                                                 const output_options& opts, layout how) {
    return std::make_unique<table_writer>(out, fields, opts, how);
}

}  // namespace proctimes::cli
