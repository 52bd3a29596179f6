// The module is its header; a C target needs one source file.
#include "CStrataCompression.h"
