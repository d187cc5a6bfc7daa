int header_defined;  /* expected-error {{in a header}} */
