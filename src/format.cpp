// format.cpp: encoder / decoder (see include/solgemm/format.hpp). Being written.
