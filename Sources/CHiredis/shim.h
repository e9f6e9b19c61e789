#ifndef ROOMCAST_CHIREDIS_SHIM_H
#define ROOMCAST_CHIREDIS_SHIM_H

// Only the RESP reader is used: I/O belongs to SwiftNIO.
#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#endif
