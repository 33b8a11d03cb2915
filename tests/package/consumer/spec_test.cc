// The test kit, as a user's test links it (wow::testing brings GoogleTest).
#include <gtest/gtest.h>

#include <wow/testing/aggregate_spec.h>

#include "brand.h"

namespace {

const wow::AggregateRef kB1{std::string(consumer::kContext), "brand", "acme", "b-1"};

TEST(ConsumerBrand, IsCreatedAndHoldsItsName) {
  wow::testing::AggregateSpec<consumer::Brand> spec(consumer::BrandType(), kB1);
  spec.When(consumer::CreateBrand{"contoso"}).ExpectEvents(consumer::BrandCreated{"contoso"});
  EXPECT_TRUE(spec.Holds(consumer::kBrandNames, "contoso"));
}

TEST(ConsumerBrand, NameTakenIsRejected) {
  wow::testing::AggregateSpec<consumer::Brand> spec(consumer::BrandType(), kB1);
  spec.GivenReservation(consumer::kBrandNames, "contoso")
      .When(consumer::CreateBrand{"contoso"})
      .ExpectRejection("NAME_TAKEN");
  EXPECT_FALSE(spec.Holds(consumer::kBrandNames, "contoso"));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
