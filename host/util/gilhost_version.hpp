#pragma once
// gilhost's own version: --version, the results file's meta record, the manifests of gilhost build.
#ifndef GILHOST_VERSION
#define GILHOST_VERSION "0.1.0"
#endif
