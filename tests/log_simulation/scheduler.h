// Scheduler: runs actors (each a thread) one at a time, in an order and at virtual times drawn
// from one seed, so a run is a function of its seed and replays exactly.
//
// An actor runs until it calls Yield (at each call of the simulated collection layer) or Sleep;
// the scheduler then picks the next actor among those awake, at random. Virtual time moves by a
// few milliseconds a step, and jumps to the next wake-up when no actor is awake. Events scheduled
// with At (a write that lands late) run between steps. An actor can be stopped (it never runs
// again: a node that died) or paused (a node that stalls and comes back).
//
// Thread-safety: Spawn and Run on the test's thread; Yield, Sleep, Now and Random by the running
// actor only (one runs at a time), or by the scheduler's events.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <semaphore>
#include <thread>
#include <vector>

#include "wow/model.h"

namespace wow::simulation {

class Scheduler {
 public:
  explicit Scheduler(std::uint64_t seed);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Adds an actor; returns its id. Before Run.
  int Spawn(std::function<void()> body);

  // Runs until every actor has finished or is stopped, or virtual time passes `deadline`; then
  // unwinds the stopped actors' threads. Returns false when the deadline stopped it.
  bool Run(EpochMillis deadline);

  // Hands control back to the scheduler; returns when this actor is picked again.
  void Yield();
  // Returns once virtual time has moved `ms` on.
  void Sleep(std::int64_t ms);
  // The actor calling: stopped from its next Yield on (never runs again), or paused until `ms`
  // from now.
  void Stop(int actor);
  void Pause(int actor, std::int64_t ms);

  // Runs `event` between steps once virtual time reaches `at`.
  void At(EpochMillis at, std::function<void()> event);

  // Whether `actor` has finished or is stopped; whether an event waits to run.
  bool Finished(int actor) const;
  bool HasEvents() const { return !events_.empty(); }

  EpochMillis Now() const { return now_; }
  std::mt19937_64& Random() { return random_; }
  // A uniform integer in [lo, hi].
  std::int64_t Uniform(std::int64_t lo, std::int64_t hi);
  bool Chance(double p);
  int current() const { return current_; }

 private:
  struct Actor {
    std::function<void()> body;
    std::thread thread;
    std::binary_semaphore turn{0};
    EpochMillis wake_at = 0;
    bool done = false;
    bool stopped = false;
  };
  struct Event {
    EpochMillis at;
    std::uint64_t order;
    std::function<void()> run;
  };
  class Unwind {};  // thrown in a stopped actor to end its thread; no std::exception

  void Enter(Actor& actor);  // the actor's thread body
  void HandBack();           // from the running actor to the scheduler, then waits for its turn

  std::mt19937_64 random_;
  EpochMillis now_ = 1'800'000'000'000;
  std::vector<std::unique_ptr<Actor>> actors_;
  std::vector<Event> events_;
  std::uint64_t event_order_ = 0;
  std::binary_semaphore scheduler_turn_{0};
  int current_ = -1;
  bool unwinding_ = false;
};

}  // namespace wow::simulation
