/* version.h — the moonflow version, shown by the banner, --version,
 * mf.config() and mf.__version. */
#ifndef MF_VERSION_H
#define MF_VERSION_H

#define MF_VERSION "0.1.0"

#endif
