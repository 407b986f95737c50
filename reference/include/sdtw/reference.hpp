#pragma once
#include "sdtw/reference/batch.hpp"
#include "sdtw/reference/hard_dtw.hpp"
#include "sdtw/reference/problem.hpp"
#include "sdtw/reference/soft_dtw.hpp"
#include "sdtw/reference/sqeuclidean.hpp"
#include "sdtw/reference/constraints.hpp"
#include "sdtw/reference/variants.hpp"
