#ifndef TROVE_CLMDB_SHIM_H
#define TROVE_CLMDB_SHIM_H
#include <lmdb.h>
#endif
