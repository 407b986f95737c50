// Without RapidCheck the *_property_test.cpp files compile to nothing; say so by name in ctest.
#include <gtest/gtest.h>

#ifndef SDTW_HAVE_RAPIDCHECK
TEST(Properties, SkippedWithoutRapidCheck) { GTEST_SKIP() << "RapidCheck not found at configure time"; }
#endif
