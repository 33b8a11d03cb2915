#include "scheduler.h"

#include <algorithm>

namespace wow::simulation {

Scheduler::Scheduler(std::uint64_t seed) : random_(seed) {}

Scheduler::~Scheduler() {
  for (auto& actor : actors_) {
    if (actor->thread.joinable()) actor->thread.join();
  }
}

int Scheduler::Spawn(std::function<void()> body) {
  auto actor = std::make_unique<Actor>();
  actor->body = std::move(body);
  Actor* a = actor.get();  // stable while actors_ grows
  actors_.push_back(std::move(actor));
  a->thread = std::thread([this, a] { Enter(*a); });
  return static_cast<int>(actors_.size()) - 1;
}

void Scheduler::Enter(Actor& actor) {
  actor.turn.acquire();
  if (!unwinding_) {
    try {
      actor.body();
    } catch (const Unwind&) {
    }
  }
  actor.done = true;
  scheduler_turn_.release();
}

void Scheduler::HandBack() {
  Actor& actor = *actors_[static_cast<std::size_t>(current_)];
  scheduler_turn_.release();
  actor.turn.acquire();
  if (unwinding_ || actor.stopped) throw Unwind{};
}

void Scheduler::Yield() {
  actors_[static_cast<std::size_t>(current_)]->wake_at = now_;
  HandBack();
}

void Scheduler::Sleep(std::int64_t ms) {
  actors_[static_cast<std::size_t>(current_)]->wake_at = now_ + ms;
  HandBack();
}

void Scheduler::Stop(int actor) { actors_[static_cast<std::size_t>(actor)]->stopped = true; }

void Scheduler::Pause(int actor, std::int64_t ms) {
  auto& a = *actors_[static_cast<std::size_t>(actor)];
  a.wake_at = std::max(a.wake_at, now_ + ms);
}

bool Scheduler::Finished(int actor) const {
  const Actor& a = *actors_[static_cast<std::size_t>(actor)];
  return a.done || a.stopped;
}

void Scheduler::At(EpochMillis at, std::function<void()> event) {
  events_.push_back({at, event_order_++, std::move(event)});
}

std::int64_t Scheduler::Uniform(std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(random_);
}

bool Scheduler::Chance(double p) { return std::bernoulli_distribution(p)(random_); }

bool Scheduler::Run(EpochMillis deadline) {
  bool in_time = true;
  for (;;) {
    // Events that are due, in time order.
    for (;;) {
      auto due =
          std::min_element(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
            return a.at != b.at ? a.at < b.at : a.order < b.order;
          });
      if (due == events_.end() || due->at > now_) break;
      auto run = std::move(due->run);
      events_.erase(due);
      current_ = -1;
      run();
    }
    std::vector<int> awake;
    EpochMillis next_wake = -1;
    for (std::size_t i = 0; i < actors_.size(); ++i) {
      const Actor& a = *actors_[i];
      if (a.done || a.stopped) continue;
      if (a.wake_at <= now_)
        awake.push_back(static_cast<int>(i));
      else if (next_wake < 0 || a.wake_at < next_wake)
        next_wake = a.wake_at;
    }
    if (awake.empty()) {
      EpochMillis next_event = -1;
      for (const Event& e : events_) {
        if (next_event < 0 || e.at < next_event) next_event = e.at;
      }
      if (next_wake < 0 && next_event < 0) break;
      EpochMillis to = next_wake;
      if (to < 0 || (next_event >= 0 && next_event < to)) to = next_event;
      now_ = std::max(now_, to);
    } else {
      current_ =
          awake[static_cast<std::size_t>(Uniform(0, static_cast<std::int64_t>(awake.size()) - 1))];
      actors_[static_cast<std::size_t>(current_)]->turn.release();
      scheduler_turn_.acquire();
      now_ += Uniform(0, 4);
    }
    if (now_ > deadline) {
      in_time = false;
      break;
    }
  }
  // Unwind every thread still waiting for a turn: stopped actors, and all of them on a deadline.
  unwinding_ = true;
  for (std::size_t i = 0; i < actors_.size(); ++i) {
    Actor& a = *actors_[i];
    if (a.done) continue;
    current_ = static_cast<int>(i);
    a.turn.release();
    scheduler_turn_.acquire();
  }
  current_ = -1;
  return in_time;
}

}  // namespace wow::simulation
