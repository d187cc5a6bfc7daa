// A header with a namespace-scope static object that has a constructor, included by three
// sources (the shape met in a real code): each including unit has its own `requests`, and
// each of those must be per rank.
#pragma once
#include <mpi.h>
#include <string>
#include <vector>

static std::vector<MPI_Request> requests;
static std::string last_tag = "none";
static int posted;

// inline function of the header using the unit's statics
static inline void post(MPI_Request r, const std::string &tag) {
  requests.push_back(r);
  last_tag = tag;
  posted++;
}

int post_a(int rank);  // a.cpp: posts rank+1 requests
int post_b(int rank);  // b.cpp: posts 2 requests
int check_a(int rank);
int check_b(int rank);
