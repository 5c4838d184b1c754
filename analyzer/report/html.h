/* analyzer/report/html.h: the report page around the HTML writer's data, generated from
 * html-page.html by gen-html.py into html-page.c. Private to analyzer/report/. */
#ifndef FLOWCUT_ANALYZER_REPORT_HTML_H
#define FLOWCUT_ANALYZER_REPORT_HTML_H

/* The page up to where its data goes, and the page after it. */
extern const char fc__html_head[];
extern const char fc__html_tail[];

#endif /* FLOWCUT_ANALYZER_REPORT_HTML_H */
