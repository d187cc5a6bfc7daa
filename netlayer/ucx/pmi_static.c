/* The PMI client linked beside the transport: for programs that link skein_net statically
 * (tests, netpingpong). libskein passes its own client to the dlopen'ed module instead. */
#include "net.h"

const skn_net_pmi_ops skn_net_pmi_static = {
    .put = skn_pmi_put,
    .fence = skn_pmi_fence,
    .get = skn_pmi_get,
    .node_of = skn_pmi_node_of,
};
