#include "requests.hpp"

int post_b(int rank) {
  post(MPI_REQUEST_NULL, "b" + std::to_string(rank));
  post(MPI_REQUEST_NULL, "b" + std::to_string(rank));
  return (int)requests.size();
}

int check_b(int rank) {
  return ((int)requests.size() != 2 || posted != 2 || last_tag != "b" + std::to_string(rank)) ? 1 : 0;
}
