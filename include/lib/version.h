/* version: the programs' version, set by the build (the Makefile's VERSION: git's
 * description of the checkout, or debian/changelog's without git). */
#ifndef MS_VERSION_H
#define MS_VERSION_H

extern const char mailsoak_version[];

#endif
