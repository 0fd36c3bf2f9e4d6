// Moved to properties/dispatch_reference.h (the dispatch property uses it too).
#pragma once
#include "properties/dispatch_reference.h"
