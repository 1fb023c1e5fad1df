#include "kube/informer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>

#include "kube/backoff.h"

namespace tessera::kube {
namespace {

using Clock = std::chrono::steady_clock;

// How a list or a watch ended.
enum class Outcome {
  kDone,     // list: loaded; watch: the server ended it normally
  kGone,     // 410: the resourceVersion (or continue token) is too old; list afresh
  kFailed,   // any other failure: back off, then try again
  kStopped,  // stop() was called
  kAbsent,   // list of an optional kind: not served or not allowed; the cache is empty
};

// Relists after 410 more often than this are spaced out by the backoff (a server that answers
// every watch with 410 must not be listed in a tight loop).
constexpr auto kMinRelistInterval = std::chrono::seconds(1);
// A watch that the server ends this soon with nothing in it is treated like a failure.
constexpr auto kMinHealthyWatch = std::chrono::seconds(1);

std::string string_at(const nlohmann::json& object, const char* section, const char* field) {
  if (!object.is_object()) return "";
  const auto outer = object.find(section);
  if (outer == object.end() || !outer->is_object()) return "";
  const auto inner = outer->find(field);
  return inner != outer->end() && inner->is_string() ? inner->get<std::string>() : "";
}

char query_separator(const std::string& path) { return path.find('?') == std::string::npos ? '?' : '&'; }

}  // namespace

std::string object_key(const nlohmann::json& object) {
  const std::string ns = string_at(object, "metadata", "namespace");
  const std::string name = string_at(object, "metadata", "name");
  return ns.empty() ? name : fmt::format("{}/{}", ns, name);
}

struct Informer::Impl {
  Impl(ApiClient& api_client, InformerOptions informer_options, std::function<void()> change_callback)
      : client(api_client), options(std::move(informer_options)), on_change(std::move(change_callback)) {}

  void run() {
    Backoff backoff(options.backoff_initial_seconds, options.backoff_max_seconds);
    bool need_list = true;
    Clock::time_point last_relist_on_gone{};
    while (!stopping.load()) {
      if (need_list) {
        const Outcome listed = list();
        if (listed == Outcome::kStopped) return;
        if (listed == Outcome::kAbsent) {
          if (!sleep_for(options.absent_recheck_seconds)) return;
          continue;
        }
        if (listed != Outcome::kDone) {
          count(listed == Outcome::kGone ? &InformerStats::relists_on_gone : &InformerStats::errors);
          if (!sleep_for(backoff.next_delay_seconds())) return;
          continue;
        }
        need_list = false;
        backoff.reset();
      }
      const Clock::time_point started = Clock::now();
      bool received = false;
      const Outcome watched = watch(received);
      if (received) backoff.reset();
      switch (watched) {
        case Outcome::kStopped:
          return;
        case Outcome::kDone:  // the server's timeoutSeconds: resume from the last resourceVersion
          if (!received && Clock::now() - started < kMinHealthyWatch && !sleep_for(backoff.next_delay_seconds())) {
            return;
          }
          break;
        case Outcome::kGone:
          count(&InformerStats::relists_on_gone);
          need_list = true;
          if (Clock::now() - last_relist_on_gone < kMinRelistInterval && !sleep_for(backoff.next_delay_seconds())) {
            return;
          }
          last_relist_on_gone = Clock::now();
          break;
        case Outcome::kAbsent:  // an optional kind gone: list it, which finds it absent
          count(&InformerStats::errors);
          need_list = true;
          break;
        case Outcome::kFailed:  // resume the watch, from the last resourceVersion, after a pause
          count(&InformerStats::errors);
          if (!sleep_for(backoff.next_delay_seconds())) return;
          break;
      }
    }
  }

  std::string selector_query() const {
    std::string query;
    if (!options.label_selector.empty()) query += "&labelSelector=" + url_encode(options.label_selector);
    if (!options.field_selector.empty()) query += "&fieldSelector=" + url_encode(options.field_selector);
    return query;
  }

  // Lists the whole collection, page by page, then replaces the store with it at once.
  Outcome list() {
    std::map<std::string, ObjectPtr> listed;
    std::string version;
    std::string continue_token;
    do {
      std::string path =
          fmt::format("{}{}limit={}{}", options.collection_path, query_separator(options.collection_path),
                      options.list_page_size, selector_query());
      if (!continue_token.empty()) path += "&continue=" + url_encode(continue_token);
      auto response = client.get(path, stopping);
      if (stopping.load()) return Outcome::kStopped;
      if (!response) return failed(fmt::format("list {}: {}", options.collection_path, response.error().message));
      if (response->status == 410) return Outcome::kGone;  // the continue token expired
      if (options.optional_kind && (response->status == 404 || response->status == 403)) {
        return absent(
            fmt::format("list {}: HTTP {}: {}", options.collection_path, response->status, response->error_message()));
      }
      if (!response->ok()) {
        return failed(
            fmt::format("list {}: HTTP {}: {}", options.collection_path, response->status, response->error_message()));
      }
      nlohmann::json page = response->json();
      if (!page.is_object()) {
        return failed(fmt::format("list {}: the answer is not a JSON object", options.collection_path));
      }
      if (auto items = page.find("items"); items != page.end() && items->is_array()) {
        for (nlohmann::json& item : *items) {
          std::string key = object_key(item);
          listed[std::move(key)] = std::make_shared<const nlohmann::json>(std::move(item));
        }
      }
      version = string_at(page, "metadata", "resourceVersion");
      continue_token = string_at(page, "metadata", "continue");
    } while (!continue_token.empty());
    {
      std::lock_guard lock(mutex);
      objects.swap(listed);
      ++stats.lists;
      last_error.clear();
    }
    // Listeners hear of the change before synced() and resource_version() show it, so whoever
    // sees those can rely on the listener having been told.
    if (on_change) on_change();
    {
      std::lock_guard lock(mutex);
      resource_version = version;
      synced = true;
    }
    state_changed.notify_all();
    return Outcome::kDone;
  }

  Outcome watch(bool& received) {
    std::string path = fmt::format("{}{}watch=1&resourceVersion={}&allowWatchBookmarks=true&timeoutSeconds={}{}",
                                   options.collection_path, query_separator(options.collection_path),
                                   url_encode(resource_version_now()), options.watch_timeout_seconds, selector_query());
    count(&InformerStats::watch_starts);
    Outcome ended_by_event = Outcome::kDone;
    auto ended = client.watch(
        path,
        [&](WatchEvent& event) {
          ended_by_event = apply(event);
          received = true;
          return ended_by_event == Outcome::kDone;
        },
        stopping);
    if (stopping.load()) return Outcome::kStopped;
    Outcome outcome = ended_by_event;
    if (outcome == Outcome::kDone && !ended) {
      const int status = watch_http_status(ended.error());
      outcome = status == 410 ? Outcome::kGone : Outcome::kFailed;
      // An optional kind no longer served (its CRD deleted) or allowed: list it, to empty the cache.
      if (options.optional_kind && (status == 404 || status == 403)) outcome = Outcome::kAbsent;
      if (outcome != Outcome::kGone) {
        failed(fmt::format("watch {}: {}", options.collection_path, ended.error().message));
      }
    }
    if (outcome == Outcome::kGone) mark_unsynced();
    return outcome;
  }

  // kDone: applied (or ignored), go on; kGone / kFailed: an ERROR event ends the watch.
  Outcome apply(WatchEvent& event) {
    if (event.type == "ERROR") {
      const bool gone = event.object.is_object() && event.object.value("code", 0) == 410;
      if (gone) return Outcome::kGone;
      const std::string message = event.object.is_object() ? event.object.value("message", "") : "";
      return failed(fmt::format("watch {}: ERROR event: {}", options.collection_path, message));
    }
    const std::string version = string_at(event.object, "metadata", "resourceVersion");
    if (event.type == "BOOKMARK") {
      std::lock_guard lock(mutex);
      if (!version.empty()) resource_version = version;
      ++stats.bookmarks;
      return Outcome::kDone;
    }
    const bool deleted = event.type == "DELETED";
    if (!deleted && event.type != "ADDED" && event.type != "MODIFIED") return Outcome::kDone;  // unknown: skip
    std::string key = object_key(event.object);
    {
      std::lock_guard lock(mutex);
      if (deleted) {
        objects.erase(key);
      } else {
        objects[std::move(key)] = std::make_shared<const nlohmann::json>(std::move(event.object));
      }
      ++stats.events;
      last_error.clear();
    }
    if (on_change) on_change();  // before resource_version() shows the event, as for a list
    if (!version.empty()) {
      std::lock_guard lock(mutex);
      resource_version = version;
    }
    return Outcome::kDone;
  }

  // An optional kind the server does not serve or lets this client list: an empty cache, synced.
  Outcome absent(std::string message) {
    {
      std::lock_guard lock(mutex);
      objects.clear();
      last_error = std::move(message);
    }
    if (on_change) on_change();
    {
      std::lock_guard lock(mutex);
      synced = true;
    }
    state_changed.notify_all();
    return Outcome::kAbsent;
  }

  // Remembers why a request failed, for whoever waits on this informer.
  Outcome failed(std::string message) {
    std::lock_guard lock(mutex);
    last_error = std::move(message);
    return Outcome::kFailed;
  }

  void mark_unsynced() {
    std::lock_guard lock(mutex);
    synced = false;
  }

  std::string resource_version_now() const {
    std::lock_guard lock(mutex);
    return resource_version;
  }

  void count(int64_t InformerStats::*counter) {
    std::lock_guard lock(mutex);
    ++(stats.*counter);
  }

  // Sleeps, or returns false at once when stop() is called.
  bool sleep_for(double seconds) {
    std::unique_lock lock(mutex);
    return !state_changed.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping.load(); });
  }

  void stop() {
    {
      std::lock_guard lock(mutex);  // so that a sleeper cannot miss the notification
      stopping.store(true);
    }
    state_changed.notify_all();
    if (thread.joinable()) thread.join();
  }

  ApiClient& client;
  const InformerOptions options;
  const std::function<void()> on_change;

  mutable std::mutex mutex;
  mutable std::condition_variable state_changed;  // synced, or stopping
  std::map<std::string, ObjectPtr> objects;
  std::string resource_version;
  bool synced = false;
  std::string last_error;  // of the last failed list or watch; cleared by a successful list
  InformerStats stats;

  std::atomic<bool> stopping{false};
  std::thread thread;
};

Informer::Informer(ApiClient& client, InformerOptions options, std::function<void()> on_change)
    : impl_(std::make_unique<Impl>(client, std::move(options), std::move(on_change))) {}

Informer::~Informer() { stop(); }

void Informer::start() {
  if (impl_->thread.joinable()) return;
  impl_->stopping.store(false);
  impl_->thread = std::thread([this] { impl_->run(); });
}

void Informer::stop() { impl_->stop(); }

bool Informer::synced() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->synced;
}

bool Informer::wait_for_sync(double timeout_seconds, const std::atomic<bool>* stop) const {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::max(timeout_seconds, 0.0)));
  std::unique_lock lock(impl_->mutex);
  while (!impl_->synced && Clock::now() < deadline && (stop == nullptr || !stop->load())) {
    // The caller's stop flag comes with no notification: look at it every 50 ms.
    impl_->state_changed.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
  }
  return impl_->synced;
}

std::map<std::string, ObjectPtr> Informer::snapshot() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->objects;
}

std::string Informer::resource_version() const { return impl_->resource_version_now(); }

std::string Informer::last_error() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->last_error;
}

InformerStats Informer::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

}  // namespace tessera::kube
