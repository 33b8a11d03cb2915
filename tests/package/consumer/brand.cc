#include "brand.h"

#include <iostream>

#include <wow/command_processor.h>
#include <wow/event_log.h>
#include <wow/name_key.h>
#include <wow/reservation_store.h>

namespace consumer {

std::shared_ptr<wow::AggregateType<Brand>> BrandType() {
  auto brand = std::make_shared<wow::AggregateType<Brand>>("brand");
  brand->Apply<BrandCreated>([](Brand& s, const BrandCreated& e) { s.name = e.name; })
      .Decide<CreateBrand>([](const Brand&, const CreateBrand& c, wow::DecideScope& scope) {
        // The library's name key (on ICU, which an installed user links through the package).
        const wow::NameKeyResult key = wow::MakeNameKey(c.name);
        if (!key.ok()) return wow::Decision::Reject("INVALID_NAME", "Not a name: " + c.name);
        if (!scope.Reserve(kBrandNames, key.key)) {
          return wow::Decision::Reject("NAME_TAKEN", "Another brand is named " + c.name);
        }
        return wow::Decision::Events(BrandCreated{c.name});
      });
  return brand;
}

int CheckBrands(std::shared_ptr<wow::EventLog> log, std::shared_ptr<wow::ReservationStore> keys,
                std::shared_ptr<const wow::Clock> clock) {
  int failures = 0;
  auto check = [&failures](bool ok, std::string_view what) {
    if (!ok) {
      std::cerr << "FAILED: " << what << "\n";
      ++failures;
    }
  };
  log->Create(4);
  wow::CommandProcessor processor(log, keys, clock);
  processor.Register(BrandType());
  const wow::AggregateRef b1{std::string(kContext), "brand", "acme", "b-1"};
  const wow::AggregateRef b2{std::string(kContext), "brand", "acme", "b-2"};

  wow::CommandResult first = processor.Process(b1, CreateBrand{"contoso"});
  check(first.kind == wow::CommandResult::Kind::kAccepted, "the first brand is accepted");
  check(first.version == 1, "the first brand is at version 1");

  wow::CommandResult second =
      processor.Process(b2, CreateBrand{"CON\u00ADTOSO"});
  check(second.kind == wow::CommandResult::Kind::kRejected, "the second brand is rejected");
  check(second.code == "NAME_TAKEN", "the second brand's code is NAME_TAKEN (one name key)");

  wow::LoadedAggregate loaded = processor.Load(b1);
  check(loaded.version == 1 && loaded.As<Brand>().name == "contoso", "b-1 loads with its name");
  check(processor.Load(b2).version == 0, "b-2 has no events");
  check(log->Read(b1, 1, 1).size() == 1, "the log holds b-1's stream");

  std::optional<wow::Reservation> key =
      keys->Find({std::string(kContext), "brand", "acme", std::string(kBrandNames)}, "contoso");
  check(key.has_value() && key->owner == b1, "b-1 holds the name");
  return failures;
}

}  // namespace consumer
