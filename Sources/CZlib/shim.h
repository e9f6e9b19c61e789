// zlib (Debian's zlib1g-dev), for permessage-deflate (RFC 7692): raw deflate and inflate.
#include <zlib.h>
