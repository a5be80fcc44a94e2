// safetensors.cpp: reader (see include/solgemm/safetensors.hpp). Being written.
