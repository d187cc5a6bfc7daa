#include "requests.hpp"

int post_a(int rank) {
  for (int i = 0; i <= rank % 5; i++) post(MPI_REQUEST_NULL, "a" + std::to_string(rank));
  return (int)requests.size();
}

int check_a(int rank) {
  int bad = 0;
  if ((int)requests.size() != rank % 5 + 1 || posted != rank % 5 + 1) bad++;
  if (last_tag != "a" + std::to_string(rank)) bad++;
  requests.clear();
  return bad;
}
