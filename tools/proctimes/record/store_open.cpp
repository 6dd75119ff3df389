// SPDX-License-Identifier: MIT
// Opening a store: the path's checks, the one writer's lock, the schema's
// creation and version check, and the errors' words.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include "record/schema.hpp"
#include "record/store_impl.hpp"

namespace proctimes::cli::record {
namespace {

error_kind kind_of(int rc, int system_errno) {
    if (system_errno == ENOSPC || system_errno == EDQUOT) return error_kind::full;
    switch (rc & 0xff) {
        case SQLITE_FULL:
            return error_kind::full;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return error_kind::busy;
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
            return error_kind::corrupt;
        case SQLITE_CANTOPEN:
        case SQLITE_PERM:
        case SQLITE_READONLY:
        case SQLITE_AUTH:
            return error_kind::path;
        default:
            return error_kind::io;
    }
}

std::string parent_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

/// The path is usable: nothing there (a writer creates it, in a folder that
/// exists), or a regular file. A FIFO would block SQLite's open.
status check_path(const std::string& path, bool writer) {
    if (path.empty()) return error{error_kind::path, "the store's path is empty"};
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        const int e = errno;
        if (e != ENOENT) return error{error_kind::path, "cannot use " + path + " as a store: " + std::strerror(e)};
        if (!writer) return error{error_kind::not_found, "no store at " + path};
        const auto dir = parent_of(path);
        if (::stat(dir.c_str(), &st) != 0)
            return error{error_kind::path,
                         "cannot create the store " + path + ": its folder " + dir + ": " + std::strerror(errno)};
        if (!S_ISDIR(st.st_mode))
            return error{error_kind::path, "cannot create the store " + path + ": " + dir + " is not a folder"};
        return ok();
    }
    if (S_ISDIR(st.st_mode)) return error{error_kind::path, "cannot use " + path + " as a store: it is a directory"};
    if (!S_ISREG(st.st_mode))
        return error{error_kind::path,
                     "cannot use " + path + " as a store: it is not a regular file (a FIFO, socket or device)"};
    if (st.st_size == 0) return ok();  // an empty file: a writer makes the store in it
    // Anything else must be an SQLite database: SQLite would take a file
    // shorter than its header for an empty one, and a writer would overwrite it.
    static constexpr char magic[] = "SQLite format 3";  // and its NUL: 16 bytes
    char head[sizeof magic] = {};
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return error{error_kind::path, "cannot open the store " + path + ": " + std::strerror(errno)};
    const auto n = ::pread(fd, head, sizeof head, 0);
    ::close(fd);
    if (n != static_cast<ssize_t>(sizeof head) || std::memcmp(head, magic, sizeof magic) != 0)
        return error{error_kind::corrupt, path + " is not a proctimes store: not an SQLite database"};
    return ok();
}

/// Takes the writer's lock on PATH-lock and writes our pid into it; or says
/// who holds it. flock(2) locks belong to the open file: the kernel drops
/// this one when the writer's process ends, kill -9 included.
outcome<int> take_lock(const std::string& path) {
    const std::string lock_path = path + "-lock";
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0)
        return error{error_kind::path, "cannot open the writer's lock " + lock_path + " of the store " + path + ": " +
                                           std::strerror(errno)};
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int e = errno;
        if (e != EWOULDBLOCK) {
            ::close(fd);
            return error{error_kind::io, "cannot lock " + lock_path + ": " + std::strerror(e)};
        }
        // The holder writes its pid right after taking the lock: wait a
        // moment for it before saying it is unknown.
        std::string pid;
        for (int i = 0; i < 20 && pid.empty(); ++i) {
            char buf[32] = {};
            const auto n = ::pread(fd, buf, sizeof buf - 1, 0);
            if (n > 0) pid.assign(buf, static_cast<std::size_t>(n));
            while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
            if (pid.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::close(fd);
        return error{error_kind::locked, "the store " + path + " is being written by another recorder (pid " +
                                             (pid.empty() ? std::string("unknown") : pid) + "): one writer at a time"};
    }
    const std::string me = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
        const int e = errno;
        ::close(fd);
        return error{kind_of(0, e), "cannot write the writer's lock " + lock_path + ": " + std::strerror(e)};
    }
    return fd;
}

outcome<std::int64_t> pragma_int(store::impl& s, const char* sql) {
    sql::statement st;
    int rc = sql::statement::prepare(s.db.get(), sql, st);
    if (rc != SQLITE_OK) return s.fail(rc, "cannot read the store");
    rc = st.step();
    if (rc != SQLITE_ROW) return s.fail(rc, "cannot read the store");
    return st.int64(0);
}

status set_pragma(store::impl& s, const char* sql) {
    const int rc = sql::exec(s.db.get(), sql);
    if (rc != SQLITE_OK) return s.fail(rc, std::string("cannot set up the store (") + sql + ")");
    return ok();
}

/// The checks of a store's header and version; creates the schema in an
/// empty file (writer). Returns whether the store holds a schema.
status check_or_create_schema(store::impl& s) {
    auto version = pragma_int(s, "PRAGMA user_version");
    if (!version) {
        auto e = version.error();
        if (e.kind == error_kind::corrupt)
            e.message = s.path + " is not a proctimes store (SQLite: " + sql::message(s.db.get(), e.sqlite_code) + ")";
        return e;
    }
    auto app = pragma_int(s, "PRAGMA application_id");
    if (!app) return app.error();
    auto tables = pragma_int(s, "SELECT count(*) FROM sqlite_schema");
    if (!tables) return tables.error();
    if (*tables > 0 && *app != application_id)
        return s.fail(error_kind::schema, s.path + " is an SQLite database but not a proctimes store");
    if (*version > schema_version)
        return s.fail(error_kind::schema, "the store " + s.path + " was written by a newer proctimes (schema version " +
                                              std::to_string(*version) + "; this one reads versions up to " +
                                              std::to_string(schema_version) + ")");
    if (*tables > 0 && *version < 1)
        return s.fail(error_kind::schema, "the store " + s.path + " has no schema version: not a proctimes store");
    if (*tables > 0) {
        s.version = static_cast<int>(*version);
        if (s.version == 1 && s.writer) {
            sql::transaction t(s.db.get());
            if (int rc = t.begin(); rc != SQLITE_OK) return s.fail(rc, "cannot upgrade the store to schema version 2");
            const std::string upgrade = std::string(upgrade_from_1_sql) + "; PRAGMA user_version = 2";
            if (int rc = sql::exec(s.db.get(), upgrade.c_str()); rc != SQLITE_OK)
                return s.fail(rc, "cannot upgrade the store to schema version 2");
            if (int rc = t.commit(); rc != SQLITE_OK) return s.fail(rc, "cannot upgrade the store to schema version 2");
            s.version = 2;
        }
        return ok();
    }
    if (!s.writer) return s.fail(error_kind::not_found, "the store " + s.path + " holds no intervals yet");

    // A new store: incremental auto-vacuum must be chosen before the first
    // table, so that retain() can give pages back (PRAGMA incremental_vacuum).
    if (auto r = set_pragma(s, "PRAGMA auto_vacuum = INCREMENTAL"); !r) return r;
    sql::transaction t(s.db.get());
    if (int rc = t.begin(); rc != SQLITE_OK) return s.fail(rc, "cannot create the store's schema");
    if (int rc = sql::exec(s.db.get(), schema_sql); rc != SQLITE_OK)
        return s.fail(rc, "cannot create the store's schema");
    const std::string stamp = "PRAGMA application_id = " + std::to_string(application_id) +
                              "; PRAGMA user_version = " + std::to_string(schema_version);
    if (int rc = sql::exec(s.db.get(), stamp.c_str()); rc != SQLITE_OK)
        return s.fail(rc, "cannot create the store's schema");
    if (int rc = t.commit(); rc != SQLITE_OK) return s.fail(rc, "cannot create the store's schema");
    return ok();
}

/// Opens the connection and sets what every connection uses.
status connect(store::impl& s, const open_options& o, const std::string& name, int flags) {
    s.db.reset();
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(name.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nullptr);
    s.db.reset(raw);
    if (rc != SQLITE_OK) return s.fail(rc, s.writer ? "cannot open or create the store" : "cannot open the store");
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, static_cast<int>(o.busy_timeout.count()));
    // Malformed pages are refused as they are read, not followed.
    return set_pragma(s, "PRAGMA cell_size_check = ON");
}

/// The store's folder is on a file system mounted read-only, and no WAL is
/// beside the store.
bool on_read_only_media(const std::string& path) {
    struct statvfs fs {};
    if (::statvfs(parent_of(path).c_str(), &fs) != 0 || (fs.f_flag & ST_RDONLY) == 0) return false;
    struct stat st {};
    return ::stat((path + "-wal").c_str(), &st) != 0 || st.st_size == 0;
}

/// "file:PATH?immutable=1", the path's reserved characters escaped
/// (https://sqlite.org/uri.html).
std::string immutable_uri(const std::string& path) {
    std::string uri = "file:";
    for (const unsigned char c : path) {
        if (c == '%' || c == '?' || c == '#' || c <= ' ' || c >= 0x7f) {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", c);
            uri += hex;
        } else {
            uri += static_cast<char>(c);
        }
    }
    return uri + "?immutable=1";
}

}  // namespace

outcome<store> store::open(const std::string& path, const open_options& o, bool writer) {
    auto s = std::make_unique<impl>();
    s->path = path;
    s->writer = writer;
    if (auto r = check_path(path, writer); !r) return r.error();
    if (writer) {
        auto fd = take_lock(path);
        if (!fd) return fd.error();
        s->lock_fd = *fd;
        // A new store is made readable by its owner and group only: it keeps
        // every user's command lines for as long as it keeps intervals.
        // SQLite gives PATH-wal and PATH-shm the database's mode.
        const int made = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, store_mode);
        if (made >= 0)
            ::close(made);
        else if (errno != EEXIST)
            return error{error_kind::path, "cannot create the store " + path + ": " + std::strerror(errno)};
    }
    if (auto r = connect(*s, o, s->path, writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY);
        !r)
        return r.error();
    sqlite3* raw = s->db.get();
    if (writer && sqlite3_db_readonly(raw, "main") == 1)
        return s->fail(error_kind::path, "cannot write the store " + path + ": the file is read-only");
    auto checked = check_or_create_schema(*s);
    if (!checked && !writer && (checked.error().sqlite_code & 0xff) == SQLITE_CANTOPEN && on_read_only_media(path)) {
        // A WAL store on read-only media (a mounted backup): SQLite cannot
        // make the WAL's index next to it. Nothing can write there, and no
        // WAL is left to read: the file alone is the whole store.
        if (auto r = connect(*s, o, immutable_uri(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI); !r) return r.error();
        checked = check_or_create_schema(*s);
    }
    if (!checked) return checked.error();
    if (writer) {
        // WAL: readers read while the writer writes; synchronous NORMAL keeps
        // every committed interval through a crash of the process (not of
        // the machine: then the last few may go).
        sql::statement st;
        int rc = sql::statement::prepare(raw, "PRAGMA journal_mode = WAL", st);
        if (rc == SQLITE_OK) rc = st.step();
        if (rc != SQLITE_ROW) return s->fail(rc, "cannot put the store in WAL mode");
        if (st.text(0) != "wal")
            return s->fail(error_kind::io,
                           "cannot put the store " + path + " in WAL mode (it stays in " + st.text(0) + " mode)");
        for (const char* p : {"PRAGMA synchronous = NORMAL", "PRAGMA journal_size_limit = 8388608"})
            if (auto r = set_pragma(*s, p); !r) return r.error();
    }
    return store(std::move(s));
}

store::impl::~impl() {
    // Statements first: the connection closes once they are finalised.
    insert_interval = {};
    insert_sample = {};
    insert_process = {};
    find_process = {};
    select_samples = {};
    db.reset();
    if (lock_fd >= 0) ::close(lock_fd);
}

record::error store::impl::fail(int rc, const std::string& what) const {
    const int sys = db ? sqlite3_system_errno(db.get()) : 0;
    const auto kind = kind_of(rc, (rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_FULL ? sys : 0);
    std::string msg = what + ": " + sql::message(db.get(), rc);
    if (kind == error_kind::full && msg.find("full") == std::string::npos) msg += " (the disk is full)";
    return {kind, msg + " (store " + path + ")", rc};
}

record::error store::impl::fail(error_kind k, const std::string& what) const { return {k, what, 0}; }

int store::impl::prepare(sql::statement& s, const char* text) {
    if (s.valid()) return SQLITE_OK;
    return sql::statement::prepare(db.get(), text, s);
}

store::store(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
store::store(store&&) noexcept = default;
store& store::operator=(store&&) noexcept = default;
store::~store() = default;

outcome<store> store::open_writer(const std::string& path, const open_options& o) { return open(path, o, true); }
outcome<store> store::open_reader(const std::string& path, const open_options& o) { return open(path, o, false); }

const std::string& store::path() const noexcept { return impl_->path; }
bool store::writer() const noexcept { return impl_->writer; }

std::string describe(instant t) {
    const auto ns = ns_of(t);
    auto secs = static_cast<std::time_t>(ns / 1'000'000'000);
    auto ms = (ns % 1'000'000'000) / 1'000'000;
    if (ms < 0) {
        ms += 1000;
        --secs;
    }
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[64];
    const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms));
    return std::string(buf, n) + frac;
}

}  // namespace proctimes::cli::record
